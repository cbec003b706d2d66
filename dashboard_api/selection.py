"""The pure part of a list, and the cache of its results.

``select`` turns a list's rows into (the selected rows in order, totalItems, the status block):
keys for rows that do not carry them yet (the pass-through source's rows: their items are built
once and kept on the row for the page), dataselect's one filter/sort, and the kind's list status.

``Views`` remembers selections of cached rows while their inputs are unchanged. A selection
(filter, sort, total, status block) over the cache depends only on the versions of the stores it
read, the namespaces and the query's filters and sorts, never on the caller (who was authorized
before); so polling clients of one page share it, and a page out of 50,000 objects costs a slice.
Identical selections being computed are computed once (SingleFlight). Only the newest version of
a selection is kept: an older one is never asked for again.
"""

import heapq

import cachetools

from dashboard_api import dataselect
from dashboard_api.cache.store import ScopeView
from dashboard_api.serving.singleflight import SingleFlight


def select(kind, rows, rel, query, status):
    """(the selected rows in order, totalItems, status or None) of ``kind``'s ``rows``."""
    props = kind.properties
    for row in rows:
        if row.keys is None:  # from the pass-through source: its item is needed anyway
            row.item = kind.item(row.obj, rel)
            row.keys = dataselect.keys_of(row.item, props)
    order, total = dataselect.select_rows(rows, query, props, kind.filterable)
    list_status = None
    if status and kind.list_status:
        if kind.status_facts and rows and all(r.facts is not None for r in rows):
            list_status = kind.list_status(None, rel, facts=[r.facts for r in rows])
        else:
            list_status = kind.list_status([r.obj for r in rows], rel)
    return order, total, list_status


# --- pages off the cache's sorted indexes (issue #19, item 4) --------------------------------

def sort_spec(query, props):
    """The query's sorts cut at the first unknown property (as dataselect.sort_rows)."""
    spec = []
    for prop, ascending in query.sorts:
        if prop not in props:
            break
        spec.append((prop, ascending))
    return tuple(spec)


def indexable(kind, rows, query, status):
    """Whether the page of ``rows`` can be read off a sorted index of its store: rows of the
    cache (a ScopeView of the kind's own store, none dropped by ``keep``), namespaces in the
    store's order, and a status block the store counts per event (or none asked). A filtered
    page walks the index (filtered_indexed) rather than sorting its matches."""
    if not isinstance(rows, ScopeView) or kind.keep is not None:
        return False
    store = rows.store
    if store.kind is None or store.kind.name != kind.name:
        return False
    names = rows.namespaces
    if names and list(names) != sorted(set(names), key=lambda ns: ns + "/"):
        return False
    if status and kind.list_status and (kind.status_counted is None
                                        or store.status_tally(names) is None):
        return False
    return True


def filtering(kind, query):
    """Whether the query filters the kind's rows."""
    return bool(kind.filterable and query.filters)


def select_indexed(kind, view, rel, query, status, matches=None, index=None):
    """(the page's rows, totalItems, status or None) read off the store's sorted index for
    the query's sorts: O(log n + page), the status from the store's counters (the kind's
    status_counted). The same answer as ``select`` and paginate. A filtered query passes
    its FilteredIndex as ``index`` (store.ensure_filtered), or, for a broad filter, its
    ``matches`` (filtered_indexed, in index order)."""
    store, names = view.store, view.namespaces
    if matches is not None:
        total = len(matches)
        page = dataselect.paginate(matches, query)
    else:
        if index is None:
            index = store.sorted_index(sort_spec(query, kind.properties))
        total = index.count(names)
        if query.page == 0:
            page = index.page(names, 0, None)
        else:
            start = query.items_per_page * (query.page - 1)
            page = index.page(names, start, start + query.items_per_page) \
                if query.items_per_page and start < total else []
    list_status = None
    if status and kind.list_status:
        counts, pending = store.status_tally(names)
        list_status = kind.status_counted(counts, pending, rel)
    return page, total, list_status


def filter_key(kind, view, query):
    """The Views key of a filtered selection off an index: it depends on the store's version
    in the scope only (filters read the rows' own keys)."""
    store, names = view.store, view.namespaces
    return ((kind.name, "indexed", id(store), names, query.filters,
             sort_spec(query, kind.properties)), (store.version(names),))


def filtered_indexed(kind, index, names, query):
    """The rows of the namespaces (empty: all) that pass the query's filters, in the index's
    order: a walk of the index, no sort. Runs in the executor: each part of the index is
    copied with one ``list(...)`` call (no Python code runs meanwhile, so the event loop
    cannot change it half-way), then filtered."""
    props = kind.properties
    if not names:
        rows = list(index.all)
    else:
        parts = [list(index.by_namespace.get(ns, ())) for ns in dict.fromkeys(names)]
        rows = parts[0] if len(parts) == 1 else list(heapq.merge(*parts, key=index.key))
    return dataselect.filter_rows(rows, query.filters, props)


class Views:
    """Selections of cached rows (see the module docstring); ``size`` shapes are kept, the
    least recently used dropped first."""

    def __init__(self, size=64):
        self.size = size
        self._done = cachetools.LRUCache(size)   # shape -> (versions, selection)
        self._flights = SingleFlight()            # (shape, versions) -> selection

    @staticmethod
    def key(kind, rows, rel, query, status):
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

    async def get(self, key, compute):
        shape, versions = key
        found = self._done.get(shape)
        if found is not None and found[0] == versions:
            return found[1]

        async def computed():
            selection = await compute()
            self._done[shape] = (versions, selection)
            return selection
        return await self._flights.run(key, computed)
