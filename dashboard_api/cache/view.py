"""One paging call over a store's rows in a scope: the watch cache's answer to the list road's
``page(query, status, rel, run) -> Page`` (query/page.py).

The store decides how a page is read, not its caller:

- **off an index** (issue #19, item 4), O(log n + page): when the scope's namespaces are in the
  store's order, nothing is dropped by the kind's ``keep``, and the status block is one the
  store counts per event (or none is asked). A sort reads the store's SortedIndex of that sort
  (cache/orders.py); a narrow filter reads a FilteredIndex of its matches, kept per event; a
  broad filter walks the sorted index in the executor, its matches remembered until the scope
  changes. A small store builds a missing index on the spot; a large one never makes a request
  wait for a whole sort (issue #41): until its index is built (in the background, started
  after the first such page), a page is a partial selection in the executor, the page's rows
  picked by a bounded heap (``partial_page``: O(n log page) of the scope, 100-200 ms at
  200,000 events, the GIL given back every switch interval; a category's, such as an event's
  reason, by counting its values, about half that), before which the background
  builds step aside (cache/foreground.py), as for every request's work in the executor; the
  page and DEPTH rows more are kept per event until the index is there (cache/interim.py), so
  the same sort asked again meanwhile (the next page, a refresh) is no selection again. A sort
  by a property whose values are few (a status, an event's reason) needs neither: its page is
  read off the store's list order by the counts of its values (cache/categories.py), unless
  it lies too deep. A sort of several columns selects among the rows an order of its first
  column puts first (``_narrowed``: its index either way round, its counts), not the scope;
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

import functools
import heapq
import itertools
from typing import Any, Mapping

from dashboard_api.cache import interim as interim_module
from dashboard_api.cache.interim import Interim
from dashboard_api.cache.memo import Memo
from dashboard_api.cache.orders import BROAD
from dashboard_api.cache.sorted import (first_of_few, key_function, rows_of, single_value,
                                        sliced_sort)
from dashboard_api.cache.store import Store
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import OFF_LOOP_ROWS, Page, Run, select
from dashboard_api.query.rows import Row, filter_rows, paginate
from dashboard_api.query.search import bind_filters, impossible, object_part, reads_related


# A sort of several columns asked for the first time picks its first rows among those its first
# column's order puts first (``StoreView._narrowed``), read on the loop this many at most, the
# run of the last one's value NARROW_FIRST_STEP rows first, then four times as many each time,
# up to NARROW_STEP (C copies of an index's sublists; read backwards, a run's bisections each:
# 4,096 rows at once held the loop ~270 ms at 200,000 events where the run was one row).
NARROW_LIMIT = 65536
NARROW_FIRST_STEP = 16
NARROW_STEP = 4096


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
        foreground = store.orders.foreground
        spec = sort_spec(query, kind.properties)
        filtering = bool(kind.filterable and query.filters)
        related = filtering and reads_related(query.filters, kind)
        if filtering and impossible(bind_filters(query.filters, kind, rel if related else None)):
            return self._answer(query, status, rel, matches=[])   # a term the kind lacks
        # an index of the matches, kept per event; of a search that reads the related reads,
        # of the matches of its other terms, then matched with those reads for this request
        plain = object_part(query.filters, kind) if related else query.filters
        filters = bind_filters(plain, kind) if filtering and plain else ()
        if store.orders.large(len(store)):
            # a mirror read backwards for one page of all namespaces or one (merging several
            # costs two bisections a row skipped, on the loop)
            index, build = self._ready(spec, filters, filtering, run,
                                       paged=bool(query.page and query.items_per_page)
                                       and len(self.namespaces) <= 1)
            if index is None and not filtering:   # a category's page: read by its counts
                found = self._counted(spec, query, status, rel)
                if found is not None:
                    return found
            if index is None:   # not built yet: a partial selection, then the index is built
                try:
                    return await self._partial(spec, query, status, rel, run, filtering,
                                               related)
                finally:
                    build()
        elif filters:   # small: built now, on the loop
            index = await store.orders.ensure_filtered(spec, filters, kind.properties, run)
            index = BROAD if index is None else index
        else:
            index = await store.orders.ensure(spec, run, walked=filtering)
        matches = None
        if index is BROAD:   # the plain terms are broad: a walk of the sorted index
            index = await store.orders.ensure(spec, run, walked=True)
            if not related:   # in the executor, remembered
                matches = await self.memo.get(
                    self._filter_key(query, spec),
                    lambda: foreground.run(run, filtered_walk, kind, index, names, query))
        if related:   # it reads the related reads: a walk, for this request only
            matches = await _walk(foreground, run, kind, index, names, query, rel)
        return self._answer(query, status, rel, matches, index)

    def _answer(self, query, status, rel, matches=None, index=None) -> Page:
        """The Page of ``matches`` (a filter's rows in order) when given, else of ``index``."""
        names = self.namespaces
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
        return Page(rows, total, self._list_status(status, rel))

    def _counted(self, spec, query, status, rel) -> Page | None:
        """The page of a sort by a few-valued property read off the store's list order by
        its values' counts (cache/categories.py), on the loop, nothing built; None when the
        store does not count it, the query asks every row, or the page lies too deep."""
        order = self.store.orders.category(spec)
        if order is None or not (query.page and query.items_per_page):
            return None
        start = query.items_per_page * (query.page - 1)
        rows = order.page(self.namespaces, start, start + query.items_per_page)
        if rows is None:
            return None
        return Page(rows, order.count(self.namespaces), self._list_status(status, rel))

    def _list_status(self, status, rel):
        """The status block as the store counts it per event (``indexable`` checked it can)."""
        if not (status and self.kind.list_status):
            return None
        counts, pending = self.store.status_tally(self.namespaces)
        return self.kind.status_counted(counts, pending, rel)

    def _ready(self, spec, filters, walked, run, paged=False):
        """(a large store's index for the query now, None) (the FilteredIndex of ``filters``,
        the SortedIndex of ``spec``, BROAD when ``filters`` are broad and the sorted index is
        there to walk), else (None, what starts the missing one's build in the background).
        The build starts once the partial selection has answered and its page is written
        (``build_soon``'s SOON_DELAY), not beside them: both would hold the interpreter's lock
        in turn, and the first answer would wait for both."""
        orders = self.store.orders
        if filters:
            found = orders.filtered_ready(spec, filters)
            if found is None:
                return None, functools.partial(orders.build_filtered_soon, spec, filters,
                                               self.kind.properties, run)
            if found is not BROAD:
                return found, None
        index = orders.ready(spec, walked=walked, paged=paged)
        if index is None:
            return None, functools.partial(orders.build_soon, spec, run)
        return (BROAD if filters else index), None

    async def _partial(self, spec, query, status, rel, run, filtering, related):
        """The page of a large store whose index is not built yet: its rows picked from the
        scope in the executor (``partial_page``); the total and the status block as off the
        index. A page of a sort not matched with the related reads is read off the first rows
        kept since a selection of the same sort, filter and scope (cache/interim.py) when they
        hold it; else the selection picks DEPTH rows more and keeps them."""
        store, kind, names = self.store, self.kind, self.namespaces
        orders, props = store.orders, kind.properties
        filters = bind_filters(query.filters, kind, rel if related else None) if filtering else ()
        key = key_function(spec, props)
        keep = None
        if query.page and query.items_per_page and not related:
            start = query.items_per_page * (query.page - 1)
            keep = (spec, filters, names)
            kept = orders.interim(keep)
            found = kept.page(start, start + query.items_per_page) if kept else None
            if found is not None:
                return Page(found[0], found[1], self._list_status(status, rel))
            interim = Interim(key, _passes(names, filters, props), orders.clock())
            orders.keep_interim(keep, interim)   # every event from the copy on
        # A copy of the scope made on the loop (rows change there only): one C call each.
        rows = store.scope(names) if names else list(store.rows.values())
        if keep is None:
            page, total = await orders.foreground.run(
                run, partial_page, rows, spec, filters, props, query)
            return Page(page, total, self._list_status(status, rel))
        count = start + query.items_per_page + interim_module.DEPTH
        narrowed = None if filters else self._narrowed(spec, count)
        try:
            if narrowed is None:
                first, total = await orders.foreground.run(
                    run, first_rows, rows, spec, filters, props, count)
            else:
                first, total = await orders.foreground.run(
                    run, narrowed_first_rows, rows, narrowed, spec, props, count)
        except BaseException:
            orders.forget_interim(keep, interim)
            raise
        interim.fill(first, total)
        page = first[start:start + query.items_per_page]
        return Page(page, total, self._list_status(status, rel))

    def _narrowed(self, spec, count):
        """What the first ``count`` rows of a sort of several columns are among, found from an
        order of its first column alone (they all have a first value at most the one of the
        ``count``-th row in that order): the rows up to the end of that value's run, read off
        the order (an index, either way round, or the list order by namespace), or for a
        few-valued first column, the values up to that one, by their counts (the executor
        picks their rows); None when neither is there, the scope merges several namespaces,
        or the rows to read on the loop pass NARROW_LIMIT (a deep page, a long run)."""
        orders, names = self.store.orders, self.namespaces
        if len(spec) < 2 or len(names) > 1:
            return None
        first = spec[:1]
        counted = orders.category(first)
        if counted is not None:
            at, wanted = counted.counts.at, counted.values_through(names, count)
            if len(wanted) == 1 and len(spec) == 2:   # the rows of one value, by the second
                found = self._of_value(spec[1:], at, next(iter(wanted)), count)
                if found is not None:
                    return found
            return at, wanted
        order = orders.ready(first, paged=True)
        if order is None or count > NARROW_LIMIT:   # a deep page: not read on the loop
            return None
        at = single_value(first, self.kind.properties)[0]
        found = order.page(names, 0, count)
        if len(found) < count:
            return found
        value, step = found[-1].keys[at], NARROW_FIRST_STEP
        while len(found) <= NARROW_LIMIT:   # the run's end: most runs of a name end at once
            more = order.page(names, len(found), len(found) + step)
            run = list(itertools.takewhile(lambda row: row.keys[at] == value, more))
            found += run
            if len(run) < len(more) or not more:
                return found
            step = min(4 * step, NARROW_STEP)
        return None

    def _of_value(self, spec, at, value, count):
        """The first ``count`` rows whose value at ``at`` is ``value``, in the order of
        ``spec`` (one column) read off its order, NARROW_FIRST_STEP rows first, then four
        times as many each time; None when it has no order or NARROW_LIMIT rows are read
        first. A few-valued first column holding ``count`` rows of its first value: a sort by
        an event's reason, then its last seen, reads about five rows for each it keeps."""
        order, names = self.store.orders.ready(spec, paged=True), self.namespaces
        if order is None:
            return None
        found, read, step = [], 0, NARROW_FIRST_STEP
        while len(found) < count and read <= NARROW_LIMIT:
            more = order.page(names, read, read + step)
            if not more:
                break
            read += len(more)
            found += [row for row in more if row.keys[at] == value]
            step = min(4 * step, NARROW_STEP)
        return found[:count] if len(found) >= count else None

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
                return await self.store.orders.foreground.run(
                    run, select, kind, rows, rel, query, status)
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


def partial_page(rows: list[Row], spec: tuple, filters: tuple, props: Mapping[str, Any],
                 query: Query) -> tuple[list[Row], int]:
    """(the page's rows in ``spec``'s index order, the total) of ``rows`` that pass
    ``filters``, without sorting them all: the first page-end rows (``first_rows``; keys end
    with namespace and name, so they are unique and the order is the index's). Runs in the
    executor; every step is Python code or a C call over one slice, so the GIL goes back every
    switch interval."""
    if query.page == 0:
        if filters:
            rows = filter_rows(rows, filters, props)
        return sliced_sort(list(rows), key_function(spec, props)), len(rows)
    start = query.items_per_page * (query.page - 1)
    first, total = first_rows(rows, spec, filters, props,
                              start + query.items_per_page if query.items_per_page else 0)
    return first[start:], total


def first_rows(rows: list[Row], spec: tuple, filters: tuple, props: Mapping[str, Any],
               count: int) -> tuple[list[Row], int]:
    """(the first ``count`` rows in ``spec``'s index order of ``rows`` that pass ``filters``,
    how many pass): a category's by counting its values (cache/sorted.py ``first_of_few``),
    any other by a bounded heap, no sort of them all (an Interim keeps them,
    cache/interim.py)."""
    if filters:
        rows = filter_rows(rows, filters, props)
    first = first_of_few(rows, spec, props, count)
    if first is None:
        first = heapq.nsmallest(count, rows, key=key_function(spec, props))
    return first, len(rows)


def narrowed_first_rows(rows: list[Row], narrowed: Any, spec: tuple, props: Mapping[str, Any],
                        count: int) -> tuple[list[Row], int]:
    """(the first ``count`` of ``rows`` in ``spec``'s index order, how many ``rows``), found
    among the rows ``StoreView._narrowed`` gave (a list of them, or the place of the first
    column's value and the values wanted, whose rows are picked here). Runs in the executor."""
    total = len(rows)
    if isinstance(narrowed, tuple):
        narrowed = rows_of(rows, *narrowed)
    return first_rows(narrowed, spec, (), props, count)[0], total


def _passes(names, filters, props):
    """Whether a row is in the namespaces (empty: all) and passes the filters."""
    scope = frozenset(names)

    def passes(row):
        return (not scope or row.namespace in scope) and \
            (not filters or bool(filter_rows((row,), filters, props)))
    return passes


async def _walk(foreground, run, kind, index, names, query, rel):
    count = index.count(names)
    if not count:
        return []
    if count >= OFF_LOOP_ROWS:
        return await foreground.run(run, filtered_walk, kind, index, names, query, rel)
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
