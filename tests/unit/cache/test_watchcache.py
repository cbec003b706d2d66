"""Ready means ready (issue #41): a large store's sorted index for the web UI's first page
(newest first) is built with its rows, in the executor, before the store says it has synced
(so before /readyz turns 200), together with its list status counters; a small store's is
built when asked, in microseconds. The web UI's other sorts (``later_sorts``) are built right
after a large store's first sync, in the background, one at a time. The warm index is never the
one a new sort pushes out."""

import asyncio
import json

from dashboard_api.cache import orders, slim, watchcache
from dashboard_api.cache.orders import OFF_LOOP_BUILD, SORTED_INDEXES
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.sorted import SortedIndex
from dashboard_api.cache.watchcache import FIRST_PAGE_SORT, Cached, later_sorts
from dashboard_api.kinds import table as kinds
from dashboard_api.query.rows import sort_rows
from tests.bench.standin import Pods


async def inline(fn, *args):
    return fn(*args)


def _pods(n, heavy=False):
    kind, pods = kinds.get("pod"), Pods(n, heavy=heavy)
    return [row_of(kind, slim.slim(kind, json.loads(pods.encode(i)))) for i in range(n)]


def test_a_large_store_syncs_with_its_first_pages_index_and_counters():
    async def scenario():
        pod = Cached(kinds.get("pod"), None)
        assert pod.store.orders.warm == (FIRST_PAGE_SORT,)
        await pod.relist(_pods(OFF_LOOP_BUILD), "1", inline)   # the first sync
        store = pod.store
        index = store.orders.ready(FIRST_PAGE_SORT)
        assert index is not None and index is store.orders.sorted[FIRST_PAGE_SORT]
        newest = max(store.rows.values(), key=lambda r: r.obj["metadata"]["creationTimestamp"])
        assert next(iter(index.page((), 0, 1))) is newest
        assert store._tally is not None          # the pods' list status, counted already
    asyncio.run(scenario())


def test_the_ui_sorts_are_built_after_the_first_sync_only():
    async def scenario():
        pod = Cached(kinds.get("pod"), None)
        later = later_sorts(kinds.get("pod"))
        assert pod.store.orders.later == later
        assert {spec[0][0] for spec in later} == {"name", "status"}   # Created: the first's
        assert FIRST_PAGE_SORT not in later and len(later) < SORTED_INDEXES
        await pod.relist(_pods(OFF_LOOP_BUILD), "1", inline)   # the first sync
        pod.store.set_state("synced")
        assert set(pod.store.orders.sorted) == {FIRST_PAGE_SORT}   # nobody waited for them
        await asyncio.gather(*pod.store.orders._soon)
        assert set(pod.store.orders.sorted) == {FIRST_PAGE_SORT, *later}
        props = kinds.get("pod").properties
        # each column both ways, for a page: the rows in the order of the pass-through path's
        # sort, the other way round read off the index backwards
        for spec in [((prop, ascending),) for prop in ("creationTimestamp", "name", "status")
                     for ascending in (True, False)]:
            index = pod.store.orders.ready(spec, paged=True)
            expected = sort_rows(list(pod.store.rows.values()), spec, props)
            assert list(index.page((), 0, None)) == expected
            for start, stop in ((0, 10), (7, 19), (len(expected) - 3, len(expected) + 5)):
                assert index.page((), start, stop) == expected[start:stop]
            assert isinstance(index, SortedIndex) == (spec in later + (FIRST_PAGE_SORT,))
        built = []
        pod.store.orders.build_later = built.append
        await pod.relist(_pods(OFF_LOOP_BUILD), "2", inline)   # a re-list: kept, not again
        assert built == [] and set(pod.store.orders.sorted) == {FIRST_PAGE_SORT, *later}
    asyncio.run(scenario())


def test_the_later_sorts_are_the_ui_columns_of_the_kind():
    """One way round each (times newest first): the other is the index read backwards; none
    for Created, whose newest first is every list's first page (built with the rows)."""
    assert later_sorts(kinds.get("event")) == (
        (("lastSeen", False),), (("firstSeen", False),), (("name", True),))
    assert later_sorts(kinds.get("pod")) == ((("status", True),), (("name", True),))
    for name in ("node", "replicaset", "configmap"):   # Namespace: built when asked
        assert later_sorts(kinds.get(name)) == ((("name", True),),)


def test_a_store_settles_once_caught_up_with_its_later_sorts_built(monkeypatch):
    now = [100.0]

    async def scenario():
        pod = Cached(kinds.get("pod"), None)
        pod.store.clock = lambda: now[0]
        assert not pod.settled()
        await pod.relist(_pods(OFF_LOOP_BUILD), "1", inline)
        pod.state("synced")
        assert not pod.settled()                 # the watch's backlog, the later sorts
        await asyncio.gather(*pod.store.orders._soon)
        assert not pod.settled()                 # still the backlog
        pod.caught_up()
        assert pod.settled()
        pod.state("syncing")                     # a later re-list: still settled
        assert pod.settled()

        late = Cached(kinds.get("pod"), None)   # a watch that never catches up
        late.store.clock = lambda: now[0]
        await late.relist(_pods(OFF_LOOP_BUILD), "1", inline)
        late.state("synced")
        await asyncio.gather(*late.store.orders._soon)
        now[0] += watchcache.SETTLE_LIMIT + 1
        assert late.settled()                    # not kept out of rotation for it

        small = Cached(kinds.get("configmap"), None)
        await small.relist([], "1", inline)
        small.state("synced")
        assert not small.settled()
        small.caught_up()
        assert small.settled()

        gone = Cached(kinds.get("configmap"), None)
        gone.state("unavailable")                # passed through: nothing to wait for
        assert gone.settled()
    asyncio.run(scenario())


def test_a_small_store_builds_nothing_before_it_is_asked():
    async def scenario():
        configmap, pod = Cached(kinds.get("configmap"), None), Cached(kinds.get("pod"), None)
        await pod.relist(_pods(10), "1", inline)
        await configmap.relist([], "1", inline)
        assert pod.store.orders.ready(FIRST_PAGE_SORT) is None
        assert pod.store._tally is None
        assert configmap.store.orders.sorted == {}
        assert not pod.store.orders._soon and not configmap.store.orders._soon
    asyncio.run(scenario())


def test_the_warm_index_is_never_pushed_out_by_new_sorts(monkeypatch):
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 5)
    async def scenario():
        pod = Cached(kinds.get("pod"), None)
        await pod.relist(_pods(20), "1", inline)
        store = pod.store
        warm = store.orders.ready(FIRST_PAGE_SORT)
        for prop in ("name", "status", "creationTimestamp"):   # (by namespace: no index)
            for ascending in (True, False):
                await store.orders.ensure(((prop, ascending),), inline)
                await store.orders.ensure(((prop, ascending), ("name", True)), inline)
        assert len(store.orders.sorted) == SORTED_INDEXES
        assert store.orders.ready(FIRST_PAGE_SORT) is warm
    asyncio.run(scenario())


def test_indexes_no_page_reads_are_let_go_of_but_the_warm_one(monkeypatch):
    monkeypatch.setattr(orders, "OFF_LOOP_BUILD", 5)
    monkeypatch.setattr(orders, "EXPIRE_EVERY", 1)
    now = [1000.0]

    async def scenario():
        pod = Cached(kinds.get("pod"), None)
        pod.store.orders.clock = lambda: now[0]
        await pod.relist(_pods(20), "1", inline)
        store = pod.store
        by_name = await store.orders.ensure((("name", True),), inline)
        by_status = await store.orders.ensure((("status", True),), inline)
        now[0] += orders.INDEX_IDLE - 1
        assert store.orders.ready((("status", True),)) is by_status   # read: kept
        now[0] += 2
        store.apply("MODIFIED", next(iter(store.rows.values())), "2")   # a change looks
        assert store.orders.ready((("name", True),)) is None            # unread: let go
        assert by_name is not None
        assert store.orders.ready((("status", True),)) is by_status
        now[0] += 10 * orders.INDEX_IDLE
        store.apply("MODIFIED", next(iter(store.rows.values())), "3")
        assert list(store.orders.sorted) == [FIRST_PAGE_SORT]            # the warm one stays
    asyncio.run(scenario())


def test_a_new_object_shares_what_equals_its_neighbours_record(monkeypatch):
    """Issue #41: a watch brings a new object alone, where a LIST brings it beside its
    neighbours (an object's events together, a replica set's pods): its record shares the parts
    equal to those of the row next to it by name, so the store grows no more than a LIST of the
    same objects would make it. Unequal parts stay its own; the first object has no neighbour.
    The pool of shared values starts again before each (as it does every few thousand records
    under churn), so what is shared is the neighbour's."""
    kind = kinds.get("event")
    cached = Cached(kind, None)

    def event(name, involved, message):
        return {"kind": "Event", "apiVersion": "v1",
                "metadata": {"name": name, "namespace": "ns", "uid": name + "-uid",
                             "resourceVersion": "1"},
                "involvedObject": {"kind": "Pod", "namespace": "ns", "name": involved,
                                   "uid": involved + "-uid", "apiVersion": "v1"},
                "reason": "BackOff", "message": message, "type": "Warning", "count": 1,
                "source": {"component": "kubelet", "host": "node-1"}}

    first = cached.to_row(event("web-1.aa", "web-1", "back-off restarting"))
    assert cached.store.neighbour("ns", "web-1.bb") is None
    cached.store.replace([first], "1")
    for name in ("web-1.bb", "web-1.a0"):   # after it, and before it, by name
        monkeypatch.setattr(slim, "_pool", {})
        assert cached.store.neighbour("ns", name) is first
        row = cached.to_row(event(name, "web-1", "back-off restarting"))
        assert row.obj["involvedObject"] is first.obj["involvedObject"]
        assert row.obj["source"] is first.obj["source"]
        assert row.obj["message"] is first.obj["message"]
        assert row.obj["metadata"]["name"] == name
    monkeypatch.setattr(slim, "_pool", {})
    other = cached.to_row(event("web-1.cc", "web-2", "pulled"))
    assert other.obj["involvedObject"] is not first.obj["involvedObject"]
    assert other.obj["involvedObject"]["name"] == "web-2"
    assert other.obj["message"] == "pulled"
    assert other.obj["source"] is first.obj["source"]
    assert cached.store.neighbour("elsewhere", "web-1.bb") is None
