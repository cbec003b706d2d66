"""One paging call over a store's rows in a scope: the watch cache's answer to the list road's
``page(query, status, rel, run) -> Page`` (query/page.py).

The store decides how a page is read, not its caller:

- **off an index** (issue #19, item 4), O(log n + page): when the scope's namespaces are in the
  store's order, nothing is dropped by the kind's ``keep``, and the status block is one the
  store counts per event (or none is asked). A sort reads the store's SortedIndex of that sort
  (cache/orders.py, built in the executor the first time); a narrow filter reads a
  FilteredIndex of its matches, kept per event; a broad filter walks the sorted index in the
  executor, its matches remembered until the scope changes;
- **else by a selection** of the scope's rows (query/page.py ``select``), remembered in the
  cache's Memo until the store or a related read it used changes.

A search whose match reads the related reads (query/search.py: a workload's status, from its
pods and their events), which no filtered index could keep, is matched with them for the
request alone, over the filtered index of its other terms (kept per event) when it has some
and they are narrow, else over a walk of the sorted index.

A filter's search (``filterBy=name,<query>``) is bound to the view's kind here, and matched by
the same code in every path (query/search.py ``Bound.filter``).

Both give the answer the pass-through path gives for the same objects.
"""

from __future__ import annotations

import heapq
from typing import Any, Mapping

from dashboard_api.cache.memo import Memo
from dashboard_api.cache.store import Store
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import OFF_LOOP_ROWS, Page, Run, select
from dashboard_api.query.rows import Row, filter_rows, paginate
from dashboard_api.query.search import bind_filters, impossible, object_part, reads_related


class StoreView:
    """``store``'s rows of ``kind`` in ``namespaces`` (a tuple; empty: all), not read yet."""

    def __init__(self, store: Store, kind: Any, namespaces: tuple[str, ...], memo: Memo):
        self.store = store
        self.kind = kind
        self.namespaces = tuple(namespaces)
        self.memo = memo

    def __len__(self) -> int:
        return self.store.count(self.namespaces)

    def version(self) -> tuple:
        """What every page of this view depends on of its store, known before a page is read
        (a page's validator, lists/validators.py): a change in another namespace leaves it."""
        return (id(self.store), self.store.version(self.namespaces))

    async def page(self, query: Query, status: bool, rel: Mapping[str, Any], run: Run) -> Page:
        if self.indexable(status):
            return await self._indexed(query, status, rel, run)
        return await self._selected(query, status, rel, run)

    # --- off the store's indexes -------------------------------------------------------------

    def indexable(self, status: bool) -> bool:
        """Whether the page can be read off a sorted index of the store (see the module
        docstring)."""
        kind, store, names = self.kind, self.store, self.namespaces
        if kind.keep is not None or store.kind is None or store.kind.name != kind.name:
            return False
        if names and list(names) != sorted(set(names), key=lambda ns: ns + "/"):
            return False
        if status and kind.list_status and (kind.status_counted is None
                                            or store.status_tally(names) is None):
            return False
        return True

    async def _indexed(self, query, status, rel, run):
        kind, store, names = self.kind, self.store, self.namespaces
        spec = sort_spec(query, kind.properties)
        filtering = bool(kind.filterable and query.filters)
        matches = index = None
        related = filtering and reads_related(query.filters, kind)
        if filtering and impossible(bind_filters(query.filters, kind, rel if related else None)):
            matches = []   # a term the kind lacks: nothing to read, keep or walk
        # an index of the matches, kept per event; of a search that reads the related reads,
        # of the matches of its other terms, then matched with those reads for this request
        plain = object_part(query.filters, kind) if related else query.filters
        if matches is None and filtering and plain:
            filters = bind_filters(plain, kind)
            index = await store.orders.ensure_filtered(spec, filters, kind.properties, run)
            if index is not None and related:
                matches = await _walk(run, kind, index, names, query, rel)
        if index is None and matches is None:
            index = await store.orders.ensure(spec, run, walked=filtering)
            if related:   # it reads the related reads: a walk, for this request only
                matches = await _walk(run, kind, index, names, query, rel)
            elif filtering:   # broad: a walk in the executor, remembered
                matches = await self.memo.get(self._filter_key(query, spec), lambda: run(
                    filtered_walk, kind, index, names, query))
        if matches is not None:
            total = len(matches)
            rows = paginate(matches, query)
        else:
            total = index.count(names)
            if query.page == 0:
                rows = index.page(names, 0, None)
            else:
                start = query.items_per_page * (query.page - 1)
                rows = index.page(names, start, start + query.items_per_page) \
                    if query.items_per_page and start < total else []
        list_status = None
        if status and kind.list_status:
            counts, pending = store.status_tally(names)
            list_status = kind.status_counted(counts, pending, rel)
        return Page(rows, total, list_status)

    def _filter_key(self, query, spec):
        """The Memo key of a broad filter's matches: they depend on the store's version in
        the scope only (filters read the rows' own keys)."""
        store, names = self.store, self.namespaces
        return ((self.kind.name, "indexed", id(store), names, query.filters, spec),
                (store.version(names),))

    # --- by a selection of the scope -----------------------------------------------------------

    async def _selected(self, query, status, rel, run):
        kind = self.kind
        rows = self.store.scope(self.namespaces)
        if kind.keep is not None:
            kept = [row for row in rows if kind.keep(row.obj)]
            if len(kept) != len(rows):
                rows = kept   # without the scope's version: not remembered

        async def compute():
            if len(rows) >= OFF_LOOP_ROWS:
                return await run(select, kind, rows, rel, query, status)
            return select(kind, rows, rel, query, status)

        key = self.memo.key(kind, rows, rel, query, status)
        order, total, list_status = await (self.memo.get(key, compute) if key else compute())
        return Page(paginate(order, query), total, list_status)


def sort_spec(query: Query, props: Mapping[str, Any]) -> tuple[tuple[str, bool], ...]:
    """The query's sorts cut at the first unknown property (as query/rows.py sort_rows)."""
    spec = []
    for prop, ascending in query.sorts:
        if prop not in props:
            break
        spec.append((prop, ascending))
    return tuple(spec)


async def _walk(run, kind, index, names, query, rel):
    count = index.count(names)
    if not count:
        return []
    if count >= OFF_LOOP_ROWS:
        return await run(filtered_walk, kind, index, names, query, rel)
    return filtered_walk(kind, index, names, query, rel)


def filtered_walk(kind: Any, index: Any, names: tuple[str, ...], query: Query,
                  rel: Any = None) -> list[Row]:
    """The rows of the namespaces (empty: all) that pass the query's filters, in the index's
    order: a walk of the index, no sort. Runs in the executor: each part of the index is
    copied with one ``list(...)`` call (no Python code runs meanwhile, so the event loop
    cannot change it half-way), then filtered."""
    if not names:
        rows = list(index.all)
    else:
        parts = [list(index.by_namespace.get(ns, ())) for ns in dict.fromkeys(names)]
        rows = parts[0] if len(parts) == 1 else list(heapq.merge(*parts, key=index.key))
    return filter_rows(rows, bind_filters(query.filters, kind, rel), kind.properties)
