"""Sums kept per event over the rows of each value of an index: per node, how many pods run on
it and what they request and limit (a node list item's allocated resources; issue #30).

A node list page read each of its nodes' pods with a field selector (matched pod by pod) and
summed their requests and limits in Fractions: ~30 pods a node at 150,000 pods on 5,000 nodes,
300 pods and some 2,000 Fraction additions a page of 10, about 5 ms of it. Kept here per
event, a page reads ten entries.

``Summed`` watches one index of a store (its ``watchers``: the pods' node index, a
cache/fieldindex.py ``FieldIndex``): per value of the index (a node name), the rows of that
value that match ``selector`` (a field selector: pods neither Succeeded nor Failed) counted,
and ``parts_of`` their objects (a pod's requests and limits) summed key by key. A value's sums
are made from its rows when first asked (O(its rows)), then kept per event (O(1) a row in or
out), also when its last row leaves (a node's zero: the values kept are at most the nodes
pages asked for); a full LIST swapping the index's state in drops them all (O(1) on the event
loop, where summing 150,000 pods again would hold it for a second). Sums are exact (Fractions),
so sums kept through any events equal those made afresh. Changed on the event loop only, and
read there (the pipeline's ``finish`` runs there); sums asked from another thread are made
afresh and not kept (an event applied meanwhile would be missing from them for good).

``SummedRead`` is the cache's answer to a read of one bucket with that selector
(lists/cachesource.py): the objects are listed only when iterated (the node detail's pods),
``totals()`` gives the sums (summaries.cluster.allocated).
"""

import threading

from dashboard_api.query import selectors


class Summed:
    def __init__(self, index, selector, parts_of, width):
        self.index = index
        self.selector = selector
        self.parts = frozenset(part.strip() for part in selector.split(","))
        self.match = selectors.fields(selector)
        self.parts_of = parts_of    # object -> ({key: number}, ...): ``width`` dicts
        self.width = width
        self.kept = {}              # value -> [rows matching, ({key: sum}, ...)], once asked
        self.thread = threading.get_ident()   # the one applying the events: the loop's
        index.watchers.append(self)

    def totals(self, value):
        """(rows matching, ({key: sum}, ...)) of ``value``'s bucket; never modify them."""
        kept = self.kept.get(value)
        if kept is None:
            kept = [0, tuple({} for _ in range(self.width))]
            for row in self.index.matching(value, ()):
                self._step(kept, row.obj, 1)
            if threading.get_ident() == self.thread:   # made between events
                self.kept[value] = kept
        return kept[0], kept[1]

    def answers(self, parts):
        """Whether a read whose field selector, beside the index's own field, is ``parts``
        (stripped strings) reads exactly the rows summed."""
        return frozenset(parts) == self.parts

    def added(self, source, value, row, first):
        kept = self.kept.get(value)
        if kept is not None:
            self._step(kept, row.obj, 1)

    def removed(self, source, value, row, last):
        if last:
            self.kept.pop(value, None)
            return
        kept = self.kept.get(value)
        if kept is not None:
            self._step(kept, row.obj, -1)

    def reset(self):
        """A full LIST swapped the buckets in: every value is summed again when asked."""
        self.kept = {}

    def _step(self, kept, obj, sign):
        if not self.match(obj):
            return
        kept[0] += sign
        for total, part in zip(kept[1], self.parts_of(obj)):
            for key, value in part.items():
                total[key] = total.get(key, 0) + (value if sign > 0 else -value)


class SummedRead:
    """The objects of one bucket of ``summed``'s index that match its selector, as a related
    read: listed (in the store's order) only when iterated; ``totals()``: their count and sums,
    kept per event."""

    def __init__(self, summed, value):
        self._summed = summed
        self._value = value
        self._items = None

    def totals(self):
        return self._summed.totals(self._value)

    def _list(self):
        if self._items is None:
            match = self._summed.match
            self._items = [row.obj for row in self._summed.index.matching(self._value, ())
                           if match(row.obj)]
        return self._items

    def __iter__(self):
        return iter(self._list())

    def __len__(self):
        return len(self._list())

    def __bool__(self):
        return len(self) > 0

    def __getitem__(self, index):
        return self._list()[index]

    def __eq__(self, other):
        return self._list() == list(other)

    __hash__ = None
