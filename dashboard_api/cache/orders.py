"""A store's sorted and filtered indexes, kept per event (issue #19, item 4).

A page of a large store is read off an index of its sort, O(log n + page), rather than a sort of
the whole store per request: ``Orders`` keeps, per store, the SortedIndex of each sort asked for
(the least recently used dropped) and the FilteredIndex of each narrow filter; each event moves
one row in each of them. A large store's index is built in the executor over a copy of the rows,
with the events that arrived meanwhile applied to it afterwards, so the event loop never sorts
the whole store. No sort is the store's own order (ListOrder): nothing to build.

Only the store (cache/store.py) tells it of events and full LISTs; only the store's view
(cache/view.py) asks it for an index.
"""

from __future__ import annotations

import asyncio
import collections
import functools
from typing import Any, Iterable

from dashboard_api.cache.sorted import FilteredIndex, ListOrder, SortedIndex, filtered_index

# Sorted indexes kept per store (one per sort spec asked for), the least recently used dropped:
# about 30 MiB each at 150,000 pods (the index and its per-namespace parts).
SORTED_INDEXES = 4
# Stores of this many rows or more build a sorted index in the executor (``ensure``).
OFF_LOOP_BUILD = 5000
# Filtered indexes kept per store (one per filters and sort spec asked for), the least recently
# used dropped; each holds at most 1/FILTER_BROAD of the rows: a filter matching more is
# answered by a walk of the sorted index, which then costs at most FILTER_BROAD x its matches.
FILTERED_INDEXES = 8
FILTER_BROAD = 4
# Builds in the executor that a full LIST overtook, before the build gives up.
BUILD_TRIES = 3


class Orders:
    """The sorted and filtered indexes of ``store``'s rows."""

    def __init__(self, store: Any):
        self.store = store
        self.sorted = collections.OrderedDict()     # sort spec -> SortedIndex
        self.filtered = collections.OrderedDict()   # (spec, filters) -> FilteredIndex
        self.broad = collections.OrderedDict()      # (spec, filters) found broad -> changes then
        self.building = {}          # index key -> (future, events meanwhile), being built
        self.changes = 0            # objects changed by events or re-lists (for ``broad``)

    # --- what the store tells ----------------------------------------------------------------

    def reset(self, sorted_indexes: Iterable[tuple[tuple, SortedIndex]] = ()) -> list:
        """A full LIST replaced the rows: indexes are rebuilt when next asked, but those of
        ``sorted_indexes`` ((spec, SortedIndex) built by the re-list in the executor). Returns
        the indexes let go of (the caller frees them off the loop)."""
        dropped = [*self.sorted.values(), *self.filtered.values()]
        self.sorted.clear()
        self.filtered.clear()
        self.broad.clear()
        self.sorted.update(sorted_indexes)
        return dropped

    def change(self, old: Any, new: Any) -> None:
        """One event: ``old`` (None: none) became ``new`` (None: deleted). O(log n) an index."""
        self.changes += 1
        for index in self.sorted.values():
            index.change(old, new)
        for index in self.filtered.values():
            index.change(old, new)
        for _future, log in self.building.values():
            log.append((old, new))

    def specs(self) -> list[tuple]:
        """The sort specs of the kept sorted indexes (a re-list builds them anew)."""
        return list(self.sorted)

    # --- what the view asks ------------------------------------------------------------------

    def get(self, spec: tuple, walked: bool = False) -> SortedIndex | ListOrder:
        """The SortedIndex of the rows for ``spec`` (built here on first use, then kept per
        event; at most SORTED_INDEXES). No sort is the store's own order (ListOrder), unless
        the index is to be ``walked`` whole in the executor (cache/view.py's broad filter)."""
        spec = tuple(spec)
        if not spec and not walked:
            return ListOrder(self.store)
        index = self.sorted.get(spec)
        if index is not None:
            self.sorted.move_to_end(spec)
            return index
        index = self.sorted[spec] = SortedIndex(spec, self.store.rows.values(),
                                                self.store.kind.properties)
        self._bound(self.sorted, SORTED_INDEXES)
        return index

    async def ensure(self, spec: tuple, run: Any,
                     walked: bool = False) -> SortedIndex | ListOrder:
        """The SortedIndex of ``spec``, as ``get``; one of a large store is built by ``run``
        (the executor) first, so the event loop never sorts the whole store."""
        spec = tuple(spec)
        rows = self.store.rows
        if (not spec and not walked) or spec in self.sorted or len(rows) < OFF_LOOP_BUILD:
            return self.get(spec, walked)
        index, built = await self._build_off_loop(spec, functools.partial(
            _sorted_index, spec, self.store.kind.properties), run)
        if built and spec not in self.sorted:
            self.sorted[spec] = index
            self._bound(self.sorted, SORTED_INDEXES)
        return self.get(spec, walked)

    async def ensure_filtered(self, spec: tuple, filters: tuple, props: Any,
                              run: Any) -> FilteredIndex | None:
        """The FilteredIndex of ``filters`` sorted by ``spec``, kept per event from now on, or
        None when the filter is broad (then the caller walks the sorted index). A large
        store's is built by ``run`` (the executor)."""
        key = (tuple(spec), tuple(filters))
        index = self.filtered.get(key)
        if index is not None:
            self.filtered.move_to_end(key)
            return index
        rows = self.store.rows
        decided = self.broad.get(key)
        if decided is not None and self.changes - decided <= len(rows) // FILTER_BROAD:
            return None        # still broad: not enough has changed since it was found so
        make = functools.partial(filtered_index, key[0], key[1], props, broad=FILTER_BROAD)
        if len(rows) < OFF_LOOP_BUILD:
            return self._keep_filtered(key, make(rows.values()))
        index, built = await self._build_off_loop(("filtered",) + key, make, run)
        if not built:          # built by another caller, or the rows kept being replaced
            return self.filtered.get(key)
        return self._keep_filtered(key, index)

    # --- building ----------------------------------------------------------------------------

    async def _build_off_loop(self, key, make, run):
        """(``make(rows)`` over a copy of the rows, run by ``run`` (the executor), with the
        events that arrived meanwhile applied to it (``change``), True); done again when a
        re-list swapped the rows in meanwhile, at most BUILD_TRIES times. Callers of the same
        ``key`` share one build: the others wait for it and get (None, False), as does the
        builder when every try was overtaken."""
        building = self.building.get(key)
        if building is not None:
            await asyncio.shield(building[0])
            return None, False
        future = asyncio.get_running_loop().create_future()
        log = []
        self.building[key] = (future, log)
        store = self.store
        try:
            for _ in range(BUILD_TRIES):
                replaced = store.replaced
                del log[:]
                made = await run(make, list(store.rows.values()))
                if store.replaced == replaced:
                    if made is not None:
                        for old, new in log:
                            made.change(old, new)
                    return made, True
            return None, False
        finally:
            del self.building[key]
            future.set_result(None)

    def _keep_filtered(self, key, index):
        """Keeps a built FilteredIndex, or remembers that the filter was broad (bounded)."""
        if index is None:
            self.broad[key] = self.changes
            self.broad.move_to_end(key)
            self._bound(self.broad, 64)
            return None
        self.broad.pop(key, None)
        self.filtered[key] = index
        self._bound(self.filtered, FILTERED_INDEXES)
        return index

    @staticmethod
    def _bound(kept, size):
        while len(kept) > size:
            kept.popitem(last=False)


def _sorted_index(spec, props, rows):
    return SortedIndex(spec, rows, props)
