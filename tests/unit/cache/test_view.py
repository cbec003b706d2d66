"""The cache's sorted indexes and list status counters (issue #19, item 4), kept per event:
after any sequence of events, a page read off an index (and its total and status block) is the
page the full selection (query.rows' stable sort of the store's scope) gives."""

import asyncio

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import interim as interim_module, orders, sorted as sorted_module, \
    view as view_module
from dashboard_api.cache.memo import Memo
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.sorted import SortedIndex, key_function
from dashboard_api.cache.store import Store
from dashboard_api.cache.view import StoreView, partial_page, sort_spec
from dashboard_api.kinds import table as kinds
from dashboard_api.query import rows as query_rows
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import select
from dashboard_api.summaries.related import Related

_NAMESPACES = ["a", "a-b", "a.c", "b", "default"]
_NAMES = ["web", "db", "api-1", "api-10", "x", "Z", "é"]
_TIMES = ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.5Z", "2023-05-01T10:00:00Z", None]
_PHASES = ["Running", "Pending", "Succeeded", "Failed", None]
_CONDITIONS = [[], [{"type": "Ready", "status": "False"}],
               [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]]


def _pod(ns, name, created, phase, conditions, deleting):
    meta = {"namespace": ns, "name": name, "uid": ns + "/" + name}
    if created:
        meta["creationTimestamp"] = created
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    status = {"conditions": conditions}
    if phase:
        status["phase"] = phase
    return {"metadata": meta, "spec": {}, "status": status}

_POD = st.builds(_pod, st.sampled_from(_NAMESPACES), st.sampled_from(_NAMES),
                 st.sampled_from(_TIMES), st.sampled_from(_PHASES),
                 st.sampled_from(_CONDITIONS), st.booleans())
_EVENT = st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), _POD)
_SORTS = st.lists(st.tuples(st.sampled_from(["name", "namespace", "creationTimestamp", "status",
                                             "nope"]), st.booleans()), max_size=3)
_FILTERS = st.lists(st.tuples(st.sampled_from(["name", "namespace", "status", "nope"]),
                              st.sampled_from(["", "a", "1", "web", "Run"])), max_size=2)
_SCOPE = st.lists(st.sampled_from(_NAMESPACES), max_size=3, unique=True).map(
    lambda names: tuple(sorted(names, key=lambda ns: ns + "/")))


def _store(initial):
    kind = kinds.get("pod")
    store = Store(kind)
    store.replace([row_of(kind, p) for p in initial], "1")
    return kind, store


def _apply(kind, store, events):
    for n, (what, pod) in enumerate(events):
        store.apply(what, row_of(kind, pod), str(n + 2))


async def inline(fn, *args):
    """The executor's ``run``, inline."""
    return fn(*args)


def _page(kind, store, scope, query, rel, status=True):
    """The page of ``query`` as the store's view answers it."""
    return asyncio.run(StoreView(store, kind, scope, Memo()).page(query, status, rel, inline))


def _rel(warned):
    rel = Related()
    rel["events"] = [{"metadata": {"name": "e%d" % i}, "involvedObject": {"uid": uid},
                      "type": "Warning", "reason": "BackOff"} for i, uid in enumerate(warned)]
    return rel


@settings(max_examples=150, deadline=None)
@given(st.lists(_POD, max_size=20), st.lists(_EVENT, max_size=30), st.lists(_SORTS, max_size=3),
       _SCOPE, st.integers(0, 4), st.integers(0, 4),
       st.lists(st.sampled_from(["%s/%s" % (ns, n) for ns in _NAMESPACES for n in _NAMES]),
                max_size=6), _FILTERS)
def test_pages_off_incremental_indexes_equal_a_full_selection(initial, events, specs, scope,
                                                              per_page, page, warned, filters):
    kind, store = _store(initial)
    queries = [Query((), sorts, per_page, page) for sorts in specs + [[]]]
    queries += [Query(filters, sorts, per_page, page) for sorts in (specs or [[]])[:1]]
    rel = _rel(warned)
    # half the indexes exist before the events (kept per event), the rest are built after
    for query in queries[::2]:
        _page(kind, store, scope, query, rel)
    _apply(kind, store, events)
    for query in queries:
        view = StoreView(store, kind, scope, Memo())
        assert view.indexable(True)
        got = asyncio.run(view.page(query, True, rel, inline))
        order, total, status = select(kind, store.scope(scope), rel, query, True)
        expected = query_rows.paginate(order, query)
        assert [(r.namespace, r.name) for r in got.rows] == [
            (r.namespace, r.name) for r in expected]
        assert all(a is b for a, b in zip(got.rows, expected))
        assert got.total == total
        assert query.filters or total == len(view)
        assert got.status == status
        assert list(got.status) == list(status)   # the same keys in the same order


@settings(max_examples=150, deadline=None)
@given(st.lists(_POD, max_size=25), st.lists(_EVENT, max_size=40), _SORTS)
def test_an_index_kept_per_event_equals_one_built_from_scratch(initial, events, sorts):
    kind, store = _store(initial)
    spec = tuple((p, a) for p, a in sorts if p in kind.properties)
    index = store.orders.get(spec, walked=True)
    _apply(kind, store, events)
    assert store.orders.get(spec, walked=True) is index
    fresh = SortedIndex(spec, store.rows.values(), kind.properties)
    assert list(index.all) == list(fresh.all)
    assert {ns: list(s) for ns, s in index.by_namespace.items()} == {
        ns: list(s) for ns, s in fresh.by_namespace.items()}
    assert list(index.all) == query_rows.sort_rows(store.scope(()), spec, kind.properties)


@settings(max_examples=150, deadline=None)
@given(st.lists(_POD, max_size=25), st.lists(_EVENT, max_size=40), _SCOPE, st.integers(0, 30),
       st.integers(0, 30), st.sampled_from([(), (("namespace", True),), (("namespace", False),)]))
def test_no_sort_reads_the_store_in_list_order_with_nothing_built(initial, events, scope,
                                                                   start, length, spec):
    """A page of no sort (the API server's order) is read off the store's names, kept per
    event, namespaces coming and going included: nothing is sorted, built or kept for it; nor
    for a sort by namespace (the same walk, namespaces by name, names ascending in each)."""
    kind, store = _store(initial)
    builds = []

    async def run(fn, *args):
        builds.append(fn)
        return fn(*args)
    _apply(kind, store, events)
    limit, orders.OFF_LOOP_BUILD = orders.OFF_LOOP_BUILD, 0
    try:
        order = asyncio.run(store.orders.ensure(spec, run))
    finally:
        orders.OFF_LOOP_BUILD = limit
    assert builds == [] and not store.orders.sorted
    expected = sorted(((ns, name) for ns, name in store.rows if not scope or ns in scope),
                      key=lambda key: (key[0] + "/", key[1]))
    if spec:   # what a SortedIndex of the spec holds, and the selection's sort gives
        expected = [(r.namespace, r.name) for r in query_rows.sort_rows(
            [store.rows[key] for key in expected], spec, kind.properties)]
        assert [(r.namespace, r.name) for r in
                SortedIndex(spec, store.scope(scope), kind.properties).rows()] == expected
    assert [(r.namespace, r.name) for r in order.rows(scope)] == expected
    page = order.page(scope, start, start + length)
    assert [(r.namespace, r.name) for r in page] == expected[start:start + length]
    assert all(r is store.rows[(r.namespace, r.name)] for r in page)
    assert order.count(scope) == len(expected)


def test_indexes_are_bounded_and_dropped_by_a_relist():
    kind, store = _store([_pod("a", "p%d" % i, None, "Running", [], False) for i in range(5)])
    for i in range(2 * orders.SORTED_INDEXES + 4):
        store.orders.get((("name", i % 2 == 0),) * (1 + i // 2))
    assert len(store.orders.sorted) == orders.SORTED_INDEXES == 8
    store.replace([row_of(kind, _pod("a", "q", None, "Pending", [], False))], "9")
    assert not store.orders.sorted and store._tally is None
    assert [r.name for r in store.orders.get(()).rows()] == ["q"]
    counts, pending = store.status_tally(())
    assert counts == {"pending": 1} and list(pending["a"]["pending"]) == ["a/q"]   # events may
    # move it (the pods events may move are kept by their bucket)


def test_what_an_index_cannot_answer_goes_the_full_way():
    kind, store = _store([_pod(ns, "p", None, "Running", [], False) for ns in ("a", "b")])
    # the API server's order of these is b's then a's
    assert not StoreView(store, kind, ("b", "a"), Memo()).indexable(True)
    assert StoreView(store, kind, (), Memo()).indexable(True)
    assert not StoreView(store, kinds.get("deployment"), (), Memo()).indexable(True)
    order, total, _status = select(kind, store.scope(("b", "a")), _rel([]), Query(), True)
    got = _page(kind, store, ("b", "a"), Query(), _rel([]))
    assert [(r.namespace, r.name) for r in got.rows] == [("b", "p"), ("a", "p")]
    assert got.rows == order and got.total == total == 2


def test_descending_strings_order_prefixes_as_a_reversed_sort():
    kind, store = _store([_pod("a", n, None, None, [], False)
                          for n in ["ab", "abc", "a", "", "b", "é", "Z"]])
    got = [r.name for r in store.orders.get((("name", False),)).rows()]
    assert got == sorted(["ab", "abc", "a", "", "b", "é", "Z"], reverse=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(_POD, max_size=25), st.lists(_EVENT, max_size=30), _SORTS)
def test_an_index_built_in_the_executor_takes_the_events_of_meanwhile(initial, events, sorts):
    kind, store = _store(initial)
    spec = tuple((p, a) for p, a in sorts if p in kind.properties)
    builds = []

    async def run(fn, *args):   # the events arrive while the index is being built
        builds.append(fn)
        _apply(kind, store, events)
        await asyncio.sleep(0)
        return fn(*args)

    async def scenario():
        both = asyncio.gather(store.orders.ensure(spec, run, walked=True),
                              store.orders.ensure(spec, run, walked=True))
        return await both
    limit, orders.OFF_LOOP_BUILD = orders.OFF_LOOP_BUILD, 0
    try:
        first, second = asyncio.run(scenario())
    finally:
        orders.OFF_LOOP_BUILD = limit
    assert first is second is store.orders.get(spec, walked=True) and len(builds) == 1
    assert list(first.all) == query_rows.sort_rows(store.scope(()), spec, kind.properties)
    fresh = SortedIndex(spec, store.rows.values(), kind.properties)
    assert {ns: list(s) for ns, s in first.by_namespace.items()} == {
        ns: list(s) for ns, s in fresh.by_namespace.items()}


def test_an_index_keeps_its_rows_and_no_key_of_theirs():
    """Memory (issue #41): an index holds each row in its list of all rows and in its
    namespace's, and of the keys only one per sublist of about a thousand rows (a key tuple a
    row was ~25 MiB an index at 150,000 pods), built or kept per event alike."""
    kind, store = _store([_pod(ns, name, _TIMES[0], "Running", [], False)
                          for ns in _NAMESPACES[:3] for name in _NAMES])
    index = store.orders.get((("creationTimestamp", False),))
    store.apply("ADDED", row_of(kind, _pod("a", "new", _TIMES[1], "Pending", [], False)), "2")
    for rows in [index.all, *index.by_namespace.values()]:
        assert set(type(v) for v in vars_of(rows)) <= {list, int, tuple, type(None),
                                                    type(index.key)}   # tuple: ``single``
        assert len(rows._maxes) == len(rows._lists) <= 1
    assert sorted(map(id, index.all)) == sorted(map(id, store.rows.values()))


def vars_of(rows):
    return [getattr(rows, name) for name in rows.__slots__]


def test_a_row_has_one_bucket_key_for_all_its_indexes():
    """A pending pod in the controller and the pending index is under one (namespace + "/",
    name) tuple in both, whether it came with the full LIST or with an event (one tuple a pod
    saved)."""
    def placed(ns, name):
        pod = _pod(ns, name, _TIMES[0], "Pending", [], False)
        pod["metadata"]["ownerReferences"] = [
            {"kind": "ReplicaSet", "name": "rs", "uid": "rs-" + ns, "controller": True}]
        pod["spec"]["nodeName"] = "node-1"
        return pod

    kind = kinds.get("pod")
    store = Store(kind, kind.indexes)
    store.replace([row_of(kind, placed(ns, name)) for ns in _NAMESPACES[:2] for name in _NAMES],
                  "1")
    store.apply("ADDED", row_of(kind, placed("b", "new")), "2")
    # (the node index is a field index, cache/fieldindex.py: no buckets)
    controller, pending = store.indexes["controller"].buckets, store.indexes["pending"].buckets
    by_pending = {key: key for bucket in pending.values() for key in bucket}
    seen = 0
    for bucket in controller.values():
        for key in bucket:
            assert by_pending[key] is key
            seen += 1
    assert seen == len(store.rows) == 2 * len(_NAMES) + 1


@settings(max_examples=60, deadline=None)
@given(st.lists(_POD, min_size=1, max_size=30), _SORTS, _FILTERS, _SCOPE, st.integers(0, 4),
       st.integers(0, 4))
def test_a_large_stores_first_sort_is_a_partial_selection_then_its_index(
        initial, sorts, filters, scope, per_page, page):
    """A sort (or filter) of a large store asked for the first time is answered by a partial
    selection, the same page as the full selection, while its index is built in the
    background; the next pages read the index. A page of a sort by a pod's status (its values
    are few) is read off the list order by their counts instead, nothing selected."""
    saved, orders.OFF_LOOP_BUILD = orders.OFF_LOOP_BUILD, 1
    try:
        kind, store = _store(initial)
        query = Query(filters, sorts, per_page, page)
        rel = _rel([])
        built = []

        async def run(fn, *args):
            built.append(getattr(fn, "__name__", getattr(fn, "func", fn)))
            return fn(*args)

        async def two_pages():
            view = StoreView(store, kind, scope, Memo())
            first = await view.page(query, True, rel, run)
            for _ in range(20):   # the background builds
                await asyncio.sleep(0)
            return first, await view.page(query, True, rel, run)

        first, second = asyncio.run(two_pages())
    finally:
        orders.OFF_LOOP_BUILD = saved
    order, total, status = select(kind, store.scope(scope), rel, query, True)
    expected = [(r.namespace, r.name) for r in query_rows.paginate(order, query)]
    for got in (first, second):
        assert [(r.namespace, r.name) for r in got.rows] == expected
        assert got.total == total and got.status == status
    spec = sort_spec(query, kind.properties)
    listed = spec in ((), (("namespace", True),), (("namespace", False),))   # a ListOrder
    counted = spec in ((("status", True),), (("status", False),)) and per_page and page
    plain = not (kind.filterable and query.filters)
    if counted and plain:
        assert built == []
    else:
        assert {"partial_page", "first_rows", "narrowed_first_rows"} & set(built) or \
            listed and plain


class _Row:
    __slots__ = ("keys", "place")

    def __init__(self, value, place):
        self.keys = (None, value)
        self.place = place


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.lists(st.integers(-3, 3), max_size=40),
                 st.lists(st.sampled_from(["", "a", "ab", "abc", "b", "\u00e9", "Z"]),
                          max_size=40)),
       st.booleans(), st.integers(1, 7), st.integers(1, 6))
def test_a_partial_page_is_the_page_of_the_whole_sort(values, ascending, per_page, page):
    """A partial selection (ties, a descending string's order, a page past the end) gives the
    rows a sort of every row by its index key gives."""
    props = {"v": None}
    spec = (("v", ascending),)
    rows = [_Row(value, ("ns/", "%03d" % (i * 7 % 41))) for i, value in enumerate(values)]
    key = key_function(spec, props)
    query = Query((), spec, per_page, page)
    got, total = partial_page(rows, spec, (), props, query)
    start = per_page * (page - 1)
    assert got == sorted(rows, key=key)[start:start + per_page] and total == len(rows)


@settings(max_examples=150, deadline=None)
@given(st.lists(_POD, min_size=1, max_size=30), st.lists(_EVENT, max_size=20),
       st.sampled_from(["name", "creationTimestamp", "status", "namespace"]), st.booleans(),
       st.lists(st.tuples(st.sampled_from(["name", "creationTimestamp", "status"]),
                          st.booleans()), min_size=1, max_size=2),
       st.sampled_from([(), ("a",), ("a-b",), ("a", "b")]), st.booleans(), st.integers(1, 4),
       st.integers(1, 4), st.integers(1, 3), st.sampled_from([0, 2, 1000]), st.booleans())
def test_a_first_sort_of_several_columns_picks_among_its_first_columns_order(
        initial, events, column, ascending, rest, scope, mirrored, per_page, page, step,
        limit, second):
    """A sort of several columns asked for the first time picks its first rows among those
    an order of its first column puts first (an index, or its mirror read backwards, the list
    order by namespace, a few-valued column's counts; the rows of its first value read off an
    order of the second column): the page the full selection gives."""
    saved = orders.OFF_LOOP_BUILD, interim_module.DEPTH, view_module.NARROW_FIRST_STEP, \
        view_module.NARROW_STEP, view_module.NARROW_LIMIT
    orders.OFF_LOOP_BUILD, interim_module.DEPTH = 1, 0
    view_module.NARROW_FIRST_STEP, view_module.NARROW_STEP = 1, step
    view_module.NARROW_LIMIT = limit
    try:
        kind, store = _store(initial)
        first = ((column, ascending),)
        if column in ("name", "creationTimestamp"):   # its index, or its mirror's
            store.orders.get(sorted_module.mirror_of(first) if mirrored else first)
        if second and rest[0][0] != "status":   # the second column's
            store.orders.get((rest[0],))
        _apply(kind, store, events)
        query = Query((), [first[0]] + rest, per_page, page)
        built = []

        async def run(fn, *args):
            built.append(getattr(fn, "__name__", ""))
            return fn(*args)

        got = asyncio.run(StoreView(store, kind, scope, Memo()).page(query, True, _rel([]), run))
    finally:
        orders.OFF_LOOP_BUILD, interim_module.DEPTH, view_module.NARROW_FIRST_STEP, \
            view_module.NARROW_STEP, view_module.NARROW_LIMIT = saved
    order, total, status = select(kind, store.scope(scope), _rel([]), query, True)
    assert [(r.namespace, r.name) for r in got.rows] == [
        (r.namespace, r.name) for r in query_rows.paginate(order, query)]
    assert got.total == total
    spec = sort_spec(query, kind.properties)
    if len(spec) > 1 and len(scope) < 2 and limit == 1000 and store.rows:
        assert "narrowed_first_rows" in built


def test_a_category_then_an_ordered_column_reads_the_second_columns_order(monkeypatch):
    """A sort by a pod's status, then by name, asked first: the rows of the first status are
    read off the name index (about as many rows as statuses for each one kept), none picked
    from the whole store."""
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 1)
    monkeypatch.setattr(interim_module, "DEPTH", 0)
    phases = ["Running", "Pending", "Succeeded"]
    kind, store = _store([_pod(ns, "p%02d" % i, _TIMES[0], phases[i % 3], [], False)
                          for ns in ("a", "b") for i in range(30)])
    store.orders.get((("name", False),))
    monkeypatch.setattr(view_module, "rows_of", None)   # the whole store is not read
    for scope in ((), ("b",)):
        query = Query((), [("status", True), ("name", False)], 4, 2)
        got = asyncio.run(StoreView(store, kind, scope, Memo()).page(query, False, {}, inline))
        order, total, _status = select(kind, store.scope(scope), _rel([]), query, False)
        assert [(r.namespace, r.name) for r in got.rows] == [
            (r.namespace, r.name) for r in query_rows.paginate(order, query)]
        assert got.total == total
