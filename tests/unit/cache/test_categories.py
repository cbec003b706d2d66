"""cache/categories.py: a sort by a few-valued property read off the list order by counts."""

import asyncio

import pytest
from hypothesis import given, settings, strategies as st

from dashboard_api.cache import categories, orders
from dashboard_api.cache.categories import Counts
from dashboard_api.cache.memo import Memo
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.sorted import SortedIndex
from dashboard_api.cache.store import Store
from dashboard_api.cache.view import StoreView
from dashboard_api.kinds import table as kinds
from dashboard_api.query import properties, rows as query_rows
from dashboard_api.query.listquery import Query

_NAMESPACES = ["a", "a-b", "a.c", "b", "default"]
_NAMES = ["web", "db", "api-1", "api-10", "x", "Z", "é", "q%d"]
_REASONS = ["BackOff", "Created", "Pulled", "", "Étrange", "b"]


def _event(ns, name, reason):
    return {"metadata": {"namespace": ns, "name": name, "uid": ns + "/" + name},
            "reason": reason, "type": "Normal", "involvedObject": {"kind": "Pod", "name": "p"}}


_EVENT = st.builds(_event, st.sampled_from(_NAMESPACES),
                   st.sampled_from(_NAMES).flatmap(
                       lambda n: st.integers(0, 30).map(lambda i: n.replace("%d", str(i)))),
                   st.sampled_from(_REASONS))
_CHANGE = st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), _EVENT)
_SCOPE = st.lists(st.sampled_from(_NAMESPACES), max_size=3, unique=True).map(
    lambda names: tuple(sorted(names, key=lambda ns: ns + "/")))


@pytest.fixture
def large(monkeypatch):
    """Every store is large: it counts its few-valued properties with a full LIST's rows."""
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 1)


def _store(initial, changes):
    kind = kinds.get("event")
    store = Store(kind)
    store.replace([row_of(kind, e) for e in initial], "1")
    for n, (what, event) in enumerate(changes):
        store.apply(what, row_of(kind, event), str(n + 2))
    return kind, store


def _keys(rows):
    return [(r.namespace, r.name) for r in rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(_EVENT, max_size=40), st.lists(_CHANGE, max_size=40), _SCOPE, st.booleans(),
       st.integers(0, 45), st.integers(0, 12))
def test_a_page_read_by_counts_is_the_sorted_indexs(initial, changes, scope, ascending, start,
                                                    length):
    """Counts kept per event (namespaces and values coming and going) give the pages of the
    sort's index, both ways, in any scope: ties in list order, a page past the end empty."""
    kind, store = _store(initial, changes)
    spec = (("reason", ascending),)
    order = store.orders.category(spec)
    assert order is not None
    index = SortedIndex(spec, store.rows.values(), kind.properties)
    expected = index.page(scope, start, start + length)
    got = order.page(scope, start, start + length)
    assert _keys(got) == _keys(expected)
    assert all(a is b for a, b in zip(got, expected))
    assert order.count(scope) == index.count(scope)
    fresh = Counts(order.counts.at, store.rows.values())
    assert order.counts.by_namespace == fresh.by_namespace
    assert order.counts.total == fresh.total


def test_counts_need_no_namespace_in_one_run():
    """Rows not grouped by namespace (a dict churned by events) are counted all the same."""
    kind = kinds.get("event")
    rows = [row_of(kind, _event(ns, "e%d" % i, r)) for i, (ns, r) in enumerate(
        [("a", "X"), ("b", "Y"), ("a", "X"), ("b", "X"), ("a", "Y")])]
    counts = Counts(properties.position(kind.properties, "reason") + 1, rows)
    assert counts.by_namespace == {"a": {"X": 2, "Y": 1}, "b": {"Y": 1, "X": 1}}
    assert counts.total == {"X": 3, "Y": 2}


def test_a_page_too_deep_is_not_read_but_selected(large, monkeypatch):
    """A page that would read more than WALK_LIMIT rows is left to the selection: the view
    then answers it as for any sort without an index, the same page."""
    kind, store = _store([_event("a", "e%03d" % i, "Pulled" if i % 50 else "BackOff")
                          for i in range(200)], [])
    order = store.orders.category((("reason", True),))
    assert _keys(order.page((), 0, 2)) == [("a", "e000"), ("a", "e050")]
    monkeypatch.setattr(categories, "WALK_LIMIT", 100)
    monkeypatch.setattr(categories, "WALK_SLICE", 10)
    assert order.page((), 0, 2) == [store.rows[("a", "e000")], store.rows[("a", "e050")]]
    assert order.page((), 0, 4) is None   # the fourth BackOff is at e150
    ran = []

    async def run(fn, *args):
        ran.append(fn.__name__)
        return fn(*args)

    query = Query((), [("reason", True)], 4, 1)
    page = asyncio.run(StoreView(store, kind, (), Memo()).page(query, False, {}, run))
    assert "first_rows" in ran
    assert _keys(page.rows) == _keys(query_rows.sort_rows(
        store.scope(()), (("reason", True),), kind.properties))[:4]


def test_a_first_page_by_a_category_builds_and_selects_nothing(large):
    """A large store's first page by an event's reason is read on the loop: nothing goes to
    the executor and no index is built."""
    kind, store = _store([_event(ns, "e%02d" % i, _REASONS[i % len(_REASONS)])
                          for ns in _NAMESPACES for i in range(20)], [])
    ran = []

    async def run(fn, *args):
        ran.append(fn)
        return fn(*args)

    async def pages():
        view = StoreView(store, kind, (), Memo())
        out = []
        for ascending in (True, False):
            query = Query((), [("reason", ascending)], 10, 2)
            out.append((ascending, await view.page(query, False, {}, run)))
            for _ in range(20):   # a background build would start now
                await asyncio.sleep(0)
        return out

    for ascending, page in asyncio.run(pages()):
        expected = query_rows.sort_rows(store.scope(()), (("reason", ascending),),
                                        kind.properties)
        assert _keys(page.rows) == _keys(expected[10:20]) and page.total == len(expected)
    assert ran == [] and not store.orders.sorted


def test_a_kind_without_a_few_valued_property_counts_nothing():
    kind = kinds.get("configmap")
    store = Store(kind)
    store.replace([row_of(kind, {"metadata": {"namespace": "a", "name": "c"}})], "1")
    assert store.orders.counts == {} and store.orders.category((("name", True),)) is None
