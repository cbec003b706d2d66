"""The first rows of a sort kept while its index builds (cache/interim.py): after any events, a
page read off them is the page the full selection gives, and none is read off them that they
do not hold."""

import asyncio

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import interim as interim_module, orders
from dashboard_api.cache.memo import Memo
from dashboard_api.cache.view import StoreView
from dashboard_api.query import rows as query_rows
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import select
from tests.unit.cache.test_view import _EVENT, _FILTERS, _POD, _SCOPE, _SORTS, _apply, _rel, _store


@settings(max_examples=120, deadline=None)
@given(st.lists(_POD, min_size=1, max_size=30), st.lists(_EVENT, max_size=40), _SORTS,
       _FILTERS, _SCOPE, st.integers(1, 4), st.integers(1, 4), st.sampled_from([0, 1, 3, 1000]))
def test_a_page_asked_again_while_its_index_builds_is_read_off_the_kept_rows(
        initial, events, sorts, filters, scope, per_page, page, depth):
    saved = orders.OFF_LOOP_BUILD, interim_module.DEPTH
    orders.OFF_LOOP_BUILD, interim_module.DEPTH = 1, depth
    try:
        kind, store = _store(initial)
        query = Query(filters, sorts, per_page, page)
        rel = _rel([])
        selections = []

        async def run(fn, *args):
            name = getattr(fn, "__name__", "")
            if name in ("first_rows", "narrowed_first_rows", "partial_page", "select",
                        "filtered_walk"):
                selections.append(name)
                return fn(*args)
            await asyncio.Event().wait()   # an index build: never done in this test

        async def pages():
            view = StoreView(store, kind, scope, Memo())
            first = await view.page(query, True, rel, run)
            asked = len(selections)
            _apply(kind, store, events)
            again = await view.page(query, True, rel, run)
            for task in list(store.orders._soon):
                task.cancel()
            return first, asked, again

        first, asked, again = asyncio.run(pages())
    finally:
        orders.OFF_LOOP_BUILD, interim_module.DEPTH = saved
    order, total, status = select(kind, store.scope(scope), rel, query, True)
    expected = [(r.namespace, r.name) for r in query_rows.paginate(order, query)]
    assert [(r.namespace, r.name) for r in again.rows] == expected
    assert again.total == total and again.status == status
    if selections[:asked] in (["first_rows"], ["narrowed_first_rows"]) and \
            (depth == 1000 or not events):
        # every row of the scope kept, or nothing changed: the kept rows answered (a store
        # the events emptied is under OFF_LOOP_BUILD: its index was made at once instead)
        assert len(selections) == asked
        assert len(store.orders.interims) == 1 or not store.rows


def test_kept_rows_are_let_go_of_when_old_or_when_their_index_is_there():
    kind, store = _store([])
    made = []
    key = ((("name", True),), (), ())
    now = [0.0]
    store.orders.clock = lambda: now[0]
    interim = interim_module.Interim(lambda row: row.place, lambda row: True, now[0])
    store.orders.keep_interim(key, interim)
    made.append(interim)
    assert store.orders.interim(key) is interim
    now[0] += interim_module.AGE + 1
    assert store.orders.interim(key) is None and not store.orders.interims
    store.orders.keep_interim(key, interim_module.Interim(lambda r: r.place, bool, now[0]))
    store.orders._drop_interims((("name", True),), ())
    assert not store.orders.interims
    for n in range(orders.INTERIMS + 3):
        store.orders.keep_interim(((("name", True),), (), ("ns-%d" % n,)),
                                  interim_module.Interim(lambda r: r.place, bool, now[0]))
    assert len(store.orders.interims) == orders.INTERIMS
