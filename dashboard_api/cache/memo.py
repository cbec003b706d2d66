"""Selections of cached rows, remembered while their inputs are unchanged.

A selection (filter, sort, total, status block) over the cache depends only on the versions of
the stores it read, the namespaces and the query's filters and sorts, never on the caller (who
was authorized before); so polling clients of one page share it, and a page out of 50,000
objects costs a slice. Identical selections being computed are computed once (SingleFlight).
Only the newest version of a selection is kept: an older one is never asked for again. One
``Memo`` per watch cache; only the cache's view (cache/view.py) reads and fills it.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Hashable, Mapping

import cachetools

from dashboard_api.serving.singleflight import SingleFlight


class Memo:
    """Selections of cached rows (see the module docstring); ``size`` shapes are kept, the
    least recently used dropped first."""

    def __init__(self, size: int = 64):
        self.size = size
        self._done = cachetools.LRUCache(size)   # shape -> (versions, selection)
        self._flights = SingleFlight()            # (shape, versions) -> selection

    @staticmethod
    def key(kind: Any, rows: Any, rel: Mapping[str, Any], query: Any,
            status: bool) -> tuple[Hashable, tuple] | None:
        """(shape, versions), or None when an input has no version (read from the API
        server) and so cannot be compared."""
        rows_key = getattr(rows, "view_key", None)
        if rows_key is None:
            return None
        store, generation, namespaces = rows_key
        versions = [generation]
        for need in kind.list_needs:
            value = rel[need]
            version = getattr(value, "view_key", None)
            if version is None and value:
                return None
            versions.append(version)
        return (kind.name, store, namespaces, query.filters, query.sorts, status), \
            tuple(versions)

    async def get(self, key: tuple[Hashable, tuple], compute: Callable[[], Awaitable[Any]]) -> Any:
        shape, versions = key
        found = self._done.get(shape)
        if found is not None and found[0] == versions:
            return found[1]

        async def computed():
            selection = await compute()
            self._done[shape] = (versions, selection)
            return selection
        return await self._flights.run(key, computed)
