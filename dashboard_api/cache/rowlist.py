"""Rows kept in the order of a key, without keeping their keys (issue #41).

A sorted index (cache/sorted.py) holds every row of a store twice (the list of all rows and its
namespace's list). A sorted list that keeps each element's key beside it (sortedcontainers'
SortedKeyList) holds a key tuple per row too: ~90-130 bytes a row an index with the lists'
slots, ~25 MiB an index at 150,000 pods, so that four indexes were a quarter of the pods' whole
cache. ``RowList`` keeps only the rows, in sublists of about LOAD rows, and the key of each
sublist's last row (one key per LOAD rows); a key is made again when it is needed: ~10 of them
per insertion or removal (a bisection in one sublist), one per row of a merged page. 16 bytes a
row an index, both lists together. An update that moved no key of the order (most: a pod's name
and age never change) takes the old row's place (``replace``): one bisection, not two, and no
positions made again.

The rows' keys are unique (every index key ends with the row's namespace and name), so a row's
place is where its key is. Positions (``islice``) read the sublists' lengths, summed again
after a change, once per read: n / LOAD additions.

Only the event loop changes a RowList; a reader elsewhere copies it with ``list(...)``, which
walks the sublists while the GIL is held throughout (no Python code runs meanwhile).
"""

from __future__ import annotations

import bisect
import itertools
from typing import Any, Callable, Iterator, Sequence

LOAD = 1000


class RowList:
    """Rows in ``key`` order (``ordered``: rows already in that order). ``single``: for a key
    of one sort value, (its place in ``row.keys``, descending), so that a row's place is found
    by comparing the values themselves, no key made (a watch event costs a bisection in each
    list of each index of its store: ~3x cheaper so)."""

    __slots__ = ("key", "single", "_lists", "_maxes", "_len", "_starts")

    def __init__(self, key: Callable[[Any], Any], ordered: Sequence = (),
                 single: tuple[int, bool] | None = None):
        self.key = key
        self.single = single
        self._lists = [list(ordered[at:at + LOAD]) for at in range(0, len(ordered), LOAD)]
        self._maxes = [key(part[-1]) for part in self._lists]
        self._len = len(ordered)
        self._starts = None   # each sublist's position, made again after a change

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self) -> Iterator:
        return itertools.chain.from_iterable(self._lists)

    def _place(self, part: list, value: Any, row: Any) -> int:
        """Where ``row`` (of key ``value``) is or goes in ``part``: a bisection (bisect's own
        ``key=`` is Python 3.10's, and 3.9 is supported)."""
        lo, hi = 0, len(part)
        if self.single is not None:   # the values compared as they are: no key made
            at, descending = self.single
            mine, place = row.keys[at], row.place
            while lo < hi:
                mid = (lo + hi) // 2
                other = part[mid]
                theirs = other.keys[at]
                if theirs == mine:
                    before = other.place < place
                else:
                    before = theirs > mine if descending else theirs < mine
                if before:
                    lo = mid + 1
                else:
                    hi = mid
            return lo
        key = self.key
        while lo < hi:
            mid = (lo + hi) // 2
            if key(part[mid]) < value:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def add(self, row: Any) -> None:
        value = self.key(row)
        self._starts = None
        self._len += 1
        if not self._lists:
            self._lists.append([row])
            self._maxes.append(value)
            return
        i = bisect.bisect_left(self._maxes, value)
        if i == len(self._lists):   # after every row: the last sublist grows
            i -= 1
            self._lists[i].append(row)
            self._maxes[i] = value
        else:
            part = self._lists[i]
            part.insert(self._place(part, value, row), row)
        part = self._lists[i]
        if len(part) > 2 * LOAD:    # split in halves, each with its own last key
            half = part[LOAD:]
            del part[LOAD:]
            self._lists.insert(i + 1, half)
            self._maxes.insert(i, self.key(part[-1]))

    def _find(self, row: Any, value: Any) -> tuple[int, list, int]:
        """(sublist number, sublist, place in it) of ``row`` of key ``value``; ValueError
        when it is not here."""
        i = bisect.bisect_left(self._maxes, value)
        if i == len(self._lists):
            raise ValueError("row not in list")
        part = self._lists[i]
        at = self._place(part, value, row)
        if at == len(part) or part[at] is not row:
            raise ValueError("row not in list")
        return i, part, at

    def remove(self, row: Any) -> None:
        """Removes ``row`` (ValueError when it is not here)."""
        i, part, at = self._find(row, self.key(row))
        del part[at]
        self._len -= 1
        self._starts = None
        if not part:
            del self._lists[i], self._maxes[i]
        elif at == len(part):
            self._maxes[i] = self.key(part[-1])

    def replace(self, old: Any, new: Any) -> bool:
        """Puts ``new`` in the place of ``old`` when they sort alike (an update that changed
        no key of this order: most do), with one bisection and no shift; False, nothing
        done, when they do not. ValueError when ``old`` is not here."""
        value = self.key(old)
        if self.single is not None:
            at = self.single[0]
            if new.place != old.place or new.keys[at] != old.keys[at]:
                return False
        elif self.key(new) != value:
            return False
        _, part, at = self._find(old, value)
        part[at] = new
        return True

    def rank(self, first: Any, right: bool = False) -> int:
        """How many rows have a key whose first element is below ``first`` (at most ``first``
        when ``right``): where a run of rows of one sort value starts (ends), by bisection of
        the sublists' last keys, then of one sublist (cache/sorted.py ``MirrorOrder``)."""
        def before(row_first):
            return row_first < first or (right and not first < row_first)

        lo, hi = 0, len(self._maxes)
        while lo < hi:
            mid = (lo + hi) // 2
            if before(self._maxes[mid][0]):
                lo = mid + 1
            else:
                hi = mid
        if lo == len(self._lists):
            return self._len
        i, part, key = lo, self._lists[lo], self.key
        lo, hi = 0, len(part)
        while lo < hi:
            mid = (lo + hi) // 2
            if before(key(part[mid])[0]):
                lo = mid + 1
            else:
                hi = mid
        return self._start_of(i) + lo

    def _start_of(self, i: int) -> int:
        if self._starts is None:
            self._starts = list(itertools.accumulate(len(part) for part in self._lists))
        return self._starts[i - 1] if i else 0

    def islice(self, start: int = 0, stop: int | None = None) -> list:
        """The rows ``start:stop`` (None: to the end), as a list."""
        stop = self._len if stop is None else min(stop, self._len)
        if start >= stop:
            return []
        if self._starts is None:
            self._starts = list(itertools.accumulate(len(part) for part in self._lists))
        i = bisect.bisect_right(self._starts, start)
        offset = start - (self._starts[i - 1] if i else 0)
        out = []
        want = stop - start
        while len(out) < want and i < len(self._lists):
            part = self._lists[i]
            out += part[offset:offset + want - len(out)]
            offset = 0
            i += 1
        return out
