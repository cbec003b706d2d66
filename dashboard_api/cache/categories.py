"""A sort by a property whose values are few (a pod's status, an event's reason, a service's
type: ``Property.few``), read off the store's list order by counting, with no index built
(issue #41).

Such a sort's index is the API server's list order ((namespace + "/", name)) cut into one run
per value, the values in the sort's order: ties stay in list order both ways. So a store keeps,
for each such property, how many rows of each value each namespace holds (``Counts``: a few
integers a namespace, one dict operation an event, made with a full LIST's state in the
executor, cache/relists.py), and a page is found from them (``CategoryOrder``): the values and
the namespaces wholly before the page are skipped by their counts, and the namespaces the page
lies in are read in list order, a slice of names at a time, their rows of the page's value
picked by C calls. A first page of events by reason at 200,000 events reads about a thousand
rows on the event loop, where a selection of the whole store took 50-100 ms of the interpreter
in the executor (twice that in wall time under the churn: the watches' work shares the lock).

A page that would read more than WALK_LIMIT rows (a value rare in a large namespace, a page deep
in one) is not read here: the caller answers it as any sort without an index (cache/view.py).
"""

from __future__ import annotations

import collections
import itertools
import operator
from typing import Any, Iterable

from dashboard_api.query.rows import slashed

# Rows a page may read on the event loop (each a dict lookup and a comparison, in C: ~2 ms).
WALK_LIMIT = 16384
# Names of one namespace read by one C call.
WALK_SLICE = 1024


class Counts:
    """How many rows have each value at ``at`` of their keys, per namespace and in all. Only
    the event loop changes it (``change``); it is made in the executor (``__init__``)."""

    __slots__ = ("at", "by_namespace", "total")

    def __init__(self, at: int, rows: Iterable[Any] = ()):
        self.at = at
        self.by_namespace: dict[str, collections.Counter] = {}
        self.total: collections.Counter = collections.Counter()
        value = operator.itemgetter(at)
        keys = operator.attrgetter("keys")
        # a LIST's rows come by namespace: one C count per run of a namespace
        for namespace, group in itertools.groupby(rows, key=operator.attrgetter("namespace")):
            counted = self.by_namespace.get(namespace)
            if counted is None:
                counted = self.by_namespace[namespace] = collections.Counter()
            counted.update(map(value, map(keys, group)))
        for counted in self.by_namespace.values():
            self.total.update(counted)

    def change(self, old: Any, new: Any) -> None:
        """One event: ``old`` (None: an addition) becomes ``new`` (None: a deletion)."""
        at = self.at
        if old is not None and new is not None and old.namespace == new.namespace and \
                old.keys[at] == new.keys[at]:
            return
        if old is not None:
            self._count(old.namespace, old.keys[at], -1)
        if new is not None:
            self._count(new.namespace, new.keys[at], 1)

    def _count(self, namespace, value, sign):
        counted = self.by_namespace.get(namespace)
        if counted is None:
            counted = self.by_namespace[namespace] = collections.Counter()
        for counter in (counted, self.total):
            counter[value] += sign
            if not counter[value]:
                del counter[value]
        if not counted:
            del self.by_namespace[namespace]


class CategoryOrder:
    """The rows of ``store`` in the order of one few-valued property (counted by ``counts``),
    ``descending`` or not, ties in list order: the pages a SortedIndex of that sort gives."""

    __slots__ = ("store", "counts", "descending")

    def __init__(self, store: Any, counts: Counts, descending: bool):
        self.store = store
        self.counts = counts
        self.descending = descending

    def count(self, namespaces: tuple[str, ...]) -> int:
        return self.store.count(namespaces)

    def page(self, namespaces: tuple[str, ...], start: int, stop: int) -> list | None:
        """The rows ``start:stop`` of the namespaces (empty: all), or None when reading them
        would read more than WALK_LIMIT rows."""
        store, counts = self.store, self.counts
        order = sorted(dict.fromkeys(namespaces), key=slashed) if namespaces \
            else store.namespace_order()
        want = max(0, stop - start)
        found: list = []
        budget = WALK_LIMIT
        for value in sorted(counts.total, reverse=self.descending):
            if len(found) >= want:
                break
            held = [(ns, counts.by_namespace.get(ns, {}).get(value, 0)) for ns in order]
            in_scope = sum(n for _ns, n in held)
            if start >= in_scope:
                start -= in_scope
                continue
            for namespace, n in held:
                if len(found) >= want:
                    break
                if start >= n:
                    start -= n
                    continue
                picked, read = self._read(namespace, value, start, want - len(found), budget)
                if picked is None:
                    return None
                budget -= read
                found += picked
                start = 0
        return found

    def values_through(self, namespaces: tuple[str, ...], count: int) -> frozenset:
        """The values whose rows come first in the namespaces (empty: all), up to the value of
        the ``count``-th row (every value when there are fewer rows): a sort of several
        columns, this one first, has its first ``count`` rows among theirs (cache/view.py)."""
        wanted, seen = [], 0
        for value in sorted(self.counts.total, reverse=self.descending):
            if seen >= count:
                break
            held = self.counts.total[value] if not namespaces else sum(
                self.counts.by_namespace.get(ns, {}).get(value, 0) for ns in namespaces)
            if held:
                wanted.append(value)
                seen += held
        return frozenset(wanted)

    def _read(self, namespace, value, skip, take, budget):
        """(the rows of ``value`` in ``namespace``, in list order, after the first ``skip``,
        at most ``take``; the rows read), or (None, ...) past ``budget`` rows read."""
        rows, names = self.store.rows, self.store.names.get(namespace, ())
        of = operator.itemgetter(self.counts.at)
        keys = operator.attrgetter("keys")
        picked: list = []
        read = 0
        for at in range(0, len(names), WALK_SLICE):
            part = names[at:at + WALK_SLICE]
            read += len(part)
            if read > budget:
                return None, read
            listed = list(map(rows.__getitem__, zip(itertools.repeat(namespace), part)))
            matches = list(itertools.compress(listed, map(
                operator.eq, map(of, map(keys, listed)), itertools.repeat(value))))
            if skip >= len(matches):
                skip -= len(matches)
                continue
            picked += matches[skip:skip + take - len(picked)]
            skip = 0
            if len(picked) >= take:
                break
        return picked, read
