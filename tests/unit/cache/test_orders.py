"""Filtered indexes of the watch cache (issue #19, item 4: a filtered page costs what its
matches cost): an index of only the rows a query's filters pass, kept per event, answers the
page the full selection gives; a broad filter is declined (the caller walks the sorted index);
builds off the event loop take in the events of meanwhile; what is kept is bounded."""

import asyncio
import time

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import orders
from dashboard_api.cache.memo import Memo
from dashboard_api.cache.sorted import FilteredIndex, SortedIndex, filtered_index
from dashboard_api.cache.view import StoreView, sort_spec
from dashboard_api.query import rows as query_rows
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import select
from tests.unit.cache.test_view import (_EVENT, _POD, _SCOPE, _SORTS, _apply, _page, _pod, _rel,
                                          _store)

_FILTERS = st.lists(st.tuples(st.sampled_from(["name", "namespace", "status", "nope"]),
                              st.sampled_from(["a", "1", "web", "Run", "z"])),
                    min_size=1, max_size=2)


def _filtered(store, kind, query, run=None):
    spec = sort_spec(query, kind.properties)
    return asyncio.run(store.orders.ensure_filtered(spec, query.filters, kind.properties, run))


def _names(rows):
    return [(r.namespace, r.name) for r in rows]


@settings(max_examples=150, deadline=None)
@given(st.lists(_POD, max_size=25), st.lists(_EVENT, max_size=30), _SORTS, _FILTERS, _SCOPE,
       st.integers(0, 4), st.integers(0, 4), st.booleans())
def test_pages_off_a_filtered_index_equal_a_full_selection(initial, events, sorts, filters,
                                                           scope, per_page, page, before):
    kind, store = _store(initial)
    query = Query(filters, sorts, per_page, page)
    rel = _rel([])
    if before:   # built before the events (then kept per event), else after them
        _filtered(store, kind, query)
    changes_before = store.orders.changes
    _apply(kind, store, events)
    index = _filtered(store, kind, query)
    order, total, status = select(kind, store.scope(scope), rel, query, True)
    if index is None:   # broad: more than a quarter of the rows pass
        matches = query_rows.filter_rows(list(store.rows.values()), filters, kind.properties)
        if len(matches) * orders.FILTER_BROAD <= len(store):
            # Found broad before the events and remembered: only while few objects changed.
            assert before
            assert store.orders.changes - changes_before <= len(store) // orders.FILTER_BROAD
        return
    got = _page(kind, store, scope, query, rel)
    assert store.orders.filtered[(sort_spec(query, kind.properties), tuple(filters))] is index
    assert _names(got.rows) == _names(query_rows.paginate(order, query))
    assert got.total == total
    assert got.status == status


@settings(max_examples=100, deadline=None)
@given(st.lists(_POD, max_size=25), st.lists(_EVENT, max_size=40), _SORTS, _FILTERS)
def test_a_filtered_index_kept_per_event_equals_one_built_from_scratch(initial, events, sorts,
                                                                       filters):
    kind, store = _store(initial)
    spec = sort_spec(Query((), sorts), kind.properties)
    index = FilteredIndex(spec, filters, kind.properties,
                          query_rows.filter_rows(list(store.rows.values()), filters,
                                                 kind.properties))
    store.orders.filtered[(spec, tuple(filters))] = index
    _apply(kind, store, events)
    fresh = filtered_index(spec, filters, kind.properties, store.rows.values(), 1)
    assert list(index.all) == list(fresh.all)
    assert {ns: list(s) for ns, s in index.by_namespace.items()} == {
        ns: list(s) for ns, s in fresh.by_namespace.items()}


def test_a_build_in_the_executor_takes_in_the_events_of_meanwhile(monkeypatch):
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 1)
    pods = [_pod("a", "p%02d" % i, None, "Running", [], False) for i in range(20)]
    pods += [_pod("b", "web-%d" % i, None, "Running", [], False) for i in range(3)]
    kind, store = _store(pods)
    query = Query((("name", "web"),), (("name", True),), 10, 1)
    meanwhile = [("ADDED", _pod("a", "web-new", None, "Pending", [], False)),
                 ("DELETED", _pod("b", "web-1", None, "Running", [], False)),
                 ("ADDED", _pod("a", "other", None, "Pending", [], False))]
    calls = []

    async def run(fn, *args):
        calls.append(fn)
        _apply(kind, store, meanwhile)   # watch events arrive while the executor builds
        return fn(*args)

    index = _filtered(store, kind, query, run)
    assert [call.func for call in calls] == [filtered_index]
    assert [r.name for r in index.all] == ["web-0", "web-2", "web-new"]
    assert _filtered(store, kind, query, run) is index and len(calls) == 1   # kept


def test_a_build_a_page_asked_for_starts_once_that_page_is_written(monkeypatch):
    """A sort of a large store asked for the first time is a partial selection, and its index
    is built SOON_DELAY later, not while the loop writes that page (issue #41); a page of the
    sort asked meanwhile is read off the rows the first one kept and starts no second build."""
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 1)
    monkeypatch.setattr(orders, "SOON_DELAY", 0.2)
    pods = [_pod("ab"[i % 2], "p%02d" % i, None, "Running", [], False) for i in range(24)]
    kind, store = _store(pods)
    query = Query((), (("name", False),), 5, 1)
    calls = []

    async def run(fn, *args):
        calls.append((time.monotonic(), getattr(fn, "func", fn)))
        return fn(*args)

    async def pages():
        view = StoreView(store, kind, (), Memo())
        asked, answered = time.monotonic(), []
        for _ in range(2):
            page = await view.page(query, True, _rel([]), run)
            answered.append(_names(page.rows))
            for _ in range(20):   # the loop goes on: the page is written meanwhile
                await asyncio.sleep(0)
        early = [fn for _, fn in calls]
        await asyncio.sleep(0.5)
        return asked, answered, early, await view.page(query, True, _rel([]), run)

    asked, answered, early, last = asyncio.run(pages())
    expected = ["p%02d" % i for i in range(23, 18, -1)]
    assert [[name for _, name in rows] for rows in answered] == [expected, expected]
    assert [name for _, name in _names(last.rows)] == expected
    assert [fn.__name__ for fn in early] == ["first_rows"]   # no build while pages were written
    built = [at for at, fn in calls if fn is SortedIndex]
    assert [fn.__name__ for _, fn in calls if fn is not SortedIndex] == ["first_rows"]
    assert len(built) == 1 and built[0] >= asked + 0.2
    assert (("name", False),) in store.orders.sorted


def test_a_sort_whose_mirror_is_kept_is_built_off_it_with_the_events_of_meanwhile(monkeypatch):
    """A one-property sort whose other direction is kept is that index read backwards
    (sorted.mirror_order), its rows copied when the build starts; the events that arrive
    while the executor builds are applied to it afterwards, as to a sorted build."""
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 1)
    phases = ["Running", "Pending", "Running", "Failed"]
    pods = [_pod("ab"[i % 2], "p%02d" % i, None, phases[i % 4], [], False) for i in range(24)]
    kind, store = _store(pods)
    meanwhile = [("ADDED", _pod("a", "p99", None, "Pending", [], False)),
                 ("DELETED", _pod("b", "p01", None, "Pending", [], False)),
                 ("MODIFIED", _pod("a", "p04", None, "Failed", [], False))]
    calls, copied = [], []

    async def run(fn, *args):
        calls.append(fn)
        if len(calls) == 2:   # the source's rows, in its order, copied when the build began
            copied.append(args[0] == list(store.orders.sorted[(("status", True),)].all))
            _apply(kind, store, meanwhile)   # watch events arrive while the executor builds
        return fn(*args)

    source = asyncio.run(store.orders.ensure((("status", True),), run))
    index = asyncio.run(store.orders.ensure((("status", False),), run))
    first, second = calls
    assert "mirrored" not in first.keywords and second.keywords["mirrored"] is True
    assert copied == [True]
    fresh = SortedIndex((("status", False),), store.rows.values(), kind.properties)
    assert [r.name for r in index.all] == [r.name for r in fresh.all]
    assert {ns: list(sub) for ns, sub in index.by_namespace.items()} == \
        {ns: list(sub) for ns, sub in fresh.by_namespace.items()}
    assert list(source.all) == list(
        SortedIndex((("status", True),), store.rows.values(), kind.properties).all)


def test_broad_filters_are_declined_and_tried_again_once_enough_has_changed():
    kind, store = _store([_pod("a", "web-%d" % i, None, "Running", [], False)
                          for i in range(8)])
    query = Query((("name", "web"),), (), 10, 1)
    assert _filtered(store, kind, query) is None          # all 8 pass
    _apply(kind, store, [("ADDED", _pod("a", "x%d" % i, None, "Running", [], False))
                         for i in range(2)])
    assert _filtered(store, kind, query) is None          # remembered, 2 <= 10 // 4 events
    _apply(kind, store, [("ADDED", _pod("a", "y%d" % i, None, "Running", [], False))
                         for i in range(30)])
    _apply(kind, store, [("DELETED", _pod("a", "web-%d" % i, None, "Running", [], False))
                         for i in range(6)])
    index = _filtered(store, kind, query)                 # 2 of 34 pass now
    assert [r.name for r in index.all] == ["web-6", "web-7"]


def test_filtered_indexes_are_bounded_and_dropped_by_a_relist():
    kind, store = _store([_pod("a", "p%02d" % i, None, "Running", [], False)
                          for i in range(40)])
    for i in range(orders.FILTERED_INDEXES + 4):
        assert _filtered(store, kind, Query((("name", "p%02d" % i),), ())) is not None
    assert len(store.orders.filtered) == orders.FILTERED_INDEXES
    store.replace([], "9")
    assert not store.orders.filtered and not store.orders.broad
