"""A store's index of one field (query/fields.py ``Field``): the rows whose field has a value,
sorted per namespace by (that value, name), for the field selectors on it (issue #30).

``involvedObject.name=x,involvedObject.kind=K`` (an object's events sublist) or
``spec.nodeName=n`` (a node's pods) then reads the rows of ``x`` by bisection in each namespace
asked, O(log n + matches) a namespace, instead of a walk of every object of the namespaces;
the selector is still tested on each of them (lists/cachesource.py), so the answer is the walk's.

Each namespace keeps two lists side by side: the values (the record's own strings, shared) and
the rows. Two list slots a row, 18-24 bytes with the lists' spare room (measured on the
stand-in's events and pods, tests/bench/bench_field_index.py): buckets by value (store.Index)
cost about 245 bytes an event and 87-105 a pod, a dict by value about 44. Bisection compares
the values' strings in C, then the names of the value's few rows; a change moves the rest of
its namespace's two lists (memmove). Only the event
loop changes it; readers run on the event loop too.
"""

import bisect

from dashboard_api.query.rows import slashed


class FieldIndex:
    """``lists``: namespace -> ([value], [Row]) sorted by (value, name); rows without a value
    left out."""

    def __init__(self, field):
        self.value_of = field
        self.path = field.path
        self.lists = {}
        self.watchers = []  # told of every row added and removed (cache/summed.py)

    def _find(self, row, value):
        """(the namespace's lists or None, where ``row`` is or goes, whether it is there)."""
        found = self.lists.get(row.namespace)
        if found is None:
            return None, 0, False
        values, rows = found
        lo = bisect.bisect_left(values, value)
        hi = bisect.bisect_right(values, value, lo)
        i = _name_position(rows, row.name, lo, hi)
        return found, i, i < hi and rows[i].name == row.name

    def add(self, row, key=None):
        """``key``: store.Index's bucket key, not used here."""
        value = self.value_of.value(row.obj)
        if not value:
            return
        found, i, _there = self._find(row, value)
        if found is None:
            found = self.lists[row.namespace] = ([], [])
        found[0].insert(i, value)
        found[1].insert(i, row)
        for watcher in self.watchers:
            watcher.added(self, value, row, False)

    def replace(self, old, new, key):
        """Never in place here (False): a row's place in its list is by its value
        (cache/indexes.py ``Index.replace``)."""
        return False

    def remove(self, row):
        value = self.value_of.value(row.obj)
        if not value:
            return
        found, i, there = self._find(row, value)
        if there:
            del found[0][i], found[1][i]
            if not found[1]:
                del self.lists[row.namespace]
            for watcher in self.watchers:   # "last" is per namespace here: never said
                watcher.removed(self, value, row, False)

    def state_of(self, rows, keys=()):
        """The lists of ``rows`` (a full LIST's, in the executor): a pure function of them
        (``keys``, the rows' bucket keys, are store.Index's)."""
        value = self.value_of.value
        by_namespace = {}
        for row in rows:
            found = value(row.obj)
            if found:
                by_namespace.setdefault(row.namespace, []).append((found, row.name, row))
        lists = {}
        for namespace, keyed in by_namespace.items():
            keyed.sort(key=lambda k: (k[0], k[1]))
            lists[namespace] = ([k[0] for k in keyed], [k[2] for k in keyed])
        return lists

    def swap(self, lists):
        """A full LIST's lists in, whole."""
        self.lists = lists
        for watcher in self.watchers:
            watcher.reset()

    def matching(self, value, namespaces):
        """The rows whose field is ``value`` in the namespaces (empty: all), in the store's
        order (store.scope): namespace by namespace as asked (all: in key order), by name."""
        out = []
        for ns in dict.fromkeys(namespaces) if namespaces else sorted(self.lists, key=slashed):
            found = self.lists.get(ns)
            if found is not None:
                values, rows = found
                lo = bisect.bisect_left(values, value)
                out += rows[lo:bisect.bisect_right(values, value, lo)]
        return out


def _name_position(rows, name, lo, hi):
    """Where a row named ``name`` is or goes among ``rows[lo:hi]`` (one value's rows, sorted by
    name). Written out because ``bisect``'s ``key`` is Python 3.10's and 3.9 is supported; a
    value's rows are few (an object's events, a node's pods in one namespace)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if rows[mid].name < name:
            lo = mid + 1
        else:
            hi = mid
    return lo
