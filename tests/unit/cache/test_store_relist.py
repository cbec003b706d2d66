"""A store's re-list without holding the event loop (issue #19, Store.relist): whether its
changes are applied as events in batches or the new state is built in the executor and swapped
in, the store afterwards is the store ``replace`` of the same rows gives (rows, namespace order,
join indexes, sorted index pages, list status counters), the rows of unchanged objects are kept
as they were, other tasks run between batches, and a computation the store changed under is
done again."""

import asyncio
import contextlib

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import indexes as cache_indexes, orders, relists, store as store_module
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.sorted import SortedIndex
from dashboard_api.cache.store import Store
from dashboard_api.kinds import table as kinds

KIND = kinds.get("pod")
_NAMESPACES = ["a", "a-b", "b", "c"]
_NAMES = ["p%d" % i for i in range(6)]
_PHASES = ["Running", "Pending", "Failed"]
# a one-property sort after its mirror: a re-list builds it off the mirror's new index
_SPECS = [(), (("name", False),), (("status", True), ("creationTimestamp", False)),
          (("status", False),), (("name", True),), (("status", True),)]


def _pod(ns, name, version="1", phase="Running", owner=None, node=None):
    meta = {"namespace": ns, "name": name, "uid": ns + "/" + name, "resourceVersion": version,
            "creationTimestamp": "2024-01-0%dT00:00:00Z" % (1 + int(version) % 9)}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "controller": True, "kind": "ReplicaSet",
                                    "name": owner}]
    return {"metadata": meta, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase, "conditions": []}}


def _row(*args, **kwargs):
    return row_of(KIND, _pod(*args, **kwargs))


async def inline(fn, *args):
    """The executor's ``run``, in the test's thread (nothing else runs meanwhile)."""
    return fn(*args)


def _store(rows, indexed=True):
    store = Store(KIND, KIND.indexes)
    store.replace(rows, "1")
    if indexed:   # sorted indexes and counters kept (small) or rebuilt (large) by the re-list
        for spec in _SPECS:
            store.orders.get(spec, walked=True)
        store.status_tally(())
    return store


def _state(store):
    """What a store answers with, every part of it."""
    return {
        "rows": store.rows, "names": store.names,
        "scope": [id(r) for r in store.scope(())],
        "scopes": {ns: [id(r) for r in store.scope((ns,))] for ns in _NAMESPACES},
        "joins": {name: cache_indexes.index_state(index) for name, index in store.indexes.items()},
        "sorted": {spec: ([id(r) for r in store.orders.get(spec, walked=True).all],
                          {ns: [id(r) for r in sub] for ns, sub in
                           store.orders.get(spec, walked=True).by_namespace.items()})
                   for spec in _SPECS},
        "pages": {spec: [id(r) for r in store.orders.get(spec).page(("a", "b"), 1, 4)]
                  for spec in _SPECS},
        "tally": store.status_tally(()) and (store.status_tally(())[0], store._tally),
        "version": store.resource_version,
    }


@contextlib.contextmanager
def _path(large, batch=2):
    """Forces the large (built and swapped) or small (events in batches) way."""
    saved = (relists.SMALL_RELIST, relists.SMALL_SHARE, store_module.RELIST_BATCH)
    if large:
        relists.SMALL_RELIST, relists.SMALL_SHARE = -1, -1
    else:
        relists.SMALL_RELIST = 10 ** 9
    store_module.RELIST_BATCH = batch
    try:
        yield
    finally:
        relists.SMALL_RELIST, relists.SMALL_SHARE, store_module.RELIST_BATCH = saved


_POD = st.tuples(st.sampled_from(_NAMESPACES), st.sampled_from(_NAMES),
                 st.sampled_from(_PHASES), st.sampled_from([None, "rs1", "rs2"]),
                 st.sampled_from([None, "n1", "n2"]))
# what the re-list finds of each initial pod: the same (its live row reused), changed, gone
_FATE = st.sampled_from(["same", "same", "changed", "gone"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_POD, max_size=20), st.lists(_FATE, min_size=20, max_size=20),
       st.lists(_POD, max_size=8), st.booleans(), st.booleans())
def test_a_relist_leaves_the_store_replace_would(initial, fates, added, large, indexed):
    rows = list({(ns, n): _row(ns, n, "1", ph, o, nd) for ns, n, ph, o, nd in initial}.values())
    live = _store(rows, indexed)
    new = []
    for row, fate in zip(rows, fates):
        if fate == "same":
            new.append(row)
        elif fate == "changed":
            new.append(_row(row.namespace, row.name, "2", "Failed", "rs2", "n2"))
    known = {(r.namespace, r.name) for r in rows}
    new += [_row(ns, n, "3", ph, o, nd) for ns, n, ph, o, nd in added if (ns, n) not in known]
    with _path(large):
        swapped = asyncio.run(live.relist(new, "9", inline))
    assert swapped is (large or not rows)   # a first sync (empty store) is swapped in whole
    reference = _store(new, indexed=False)
    reference.resource_version = "9"
    assert _state(live) == _state(reference)
    kept = [row for row, fate in zip(rows, fates) if fate == "same"]
    assert all(live.rows[(r.namespace, r.name)] is r for r in kept)


def test_namespaces_emptied_and_created_keep_their_order():
    rows = [_row("b", "x"), _row("c", "y"), _row("c", "z")]
    for large in (False, True):
        store = _store(rows)
        new = [_row("a", "w"), rows[0], _row("d", "v")]   # c emptied, a and d created
        with _path(large):
            asyncio.run(store.relist(new, "2", inline))
        assert list(store.names) != [] and sorted(store.names) == ["a", "b", "d"]
        assert [r.name for r in store.scope(())] == ["w", "x", "v"]
        assert [r.name for r in store.orders.get(()).rows(("c",))] == []
        assert store.status_tally(("c",))[0] == {}


def test_a_small_relist_keeps_the_other_namespaces_selections():
    store = _store([_row("a", "x"), _row("b", "y")])
    a, b = store.version(("a",)), store.version(("b",))
    with _path(large=False):
        asyncio.run(store.relist([store.rows[("a", "x")], _row("b", "y", "2")], "2", inline))
    assert store.version(("a",)) == a and store.version(("b",)) != b
    with _path(large=True):
        asyncio.run(store.relist(list(store.rows.values()), "3", inline))
    assert store.version(("a",)) != a   # a swap changes every selection's version


def test_other_tasks_run_between_batches():
    rows = [_row("a", "p%03d" % i) for i in range(50)]
    store = _store(rows)
    new = [_row("a", "p%03d" % i, "2") for i in range(0, 50, 2)] + rows[1::2]   # 25 changes
    seen = []

    async def scenario():
        done = False

        async def reader():   # a page being asked for while the re-list goes on
            while not done:
                seen.append(sum(r.obj["metadata"]["resourceVersion"] == "2"
                                for r in store.orders.get(()).rows()))
                await asyncio.sleep(0)

        task = asyncio.ensure_future(reader())
        await asyncio.sleep(0)
        await store.relist(new, "2", inline)
        done = True
        await task

    with _path(large=False, batch=10):
        asyncio.run(scenario())
    # the reader saw none, then each batch of 10 changes applied; the last batch ended it
    assert seen == [0, 10, 20]
    assert sum(r.obj["metadata"]["resourceVersion"] == "2" for r in store.rows.values()) == 25


def test_a_computation_the_store_changed_under_is_done_again():
    store = _store([_row("a", "x"), _row("a", "y")])
    new = [store.rows[("a", "x")], _row("a", "z")]
    calls = []

    async def meddling(fn, *args):   # the store changes while the first plan is computed
        calls.append(fn)
        if len(calls) == 1:
            store.apply("ADDED", _row("b", "late"), "5")
        return fn(*args)

    with _path(large=False):
        assert asyncio.run(store.relist(new, "6", meddling)) is False
    assert len(calls) == 2 and sorted(store.rows) == [("a", "x"), ("a", "z")]
    assert store.rows[("a", "x")] is new[0]

    async def always(fn, *args):   # it never settles: replaced on the loop after three tries
        calls.append(fn)
        store.apply("ADDED", _row("b", "late%d" % len(calls)), "7")
        return fn(*args)

    calls.clear()
    final = [_row("c", "only")]
    assert asyncio.run(store.relist(final, "8", always)) is True
    assert len(calls) == store_module.RELIST_TRIES == 3
    assert list(store.rows.values()) == final and store.resource_version == "8"


def test_an_index_built_meanwhile_matches_the_relisted_rows():
    spec = (("name", True),)
    for large in (False, True):
        store = _store([_row("a", "p%d" % i) for i in range(6)], indexed=False)
        new = [_row("a", "p%d" % i, "2") for i in range(2, 9)]
        builds = []

        async def scenario():
            gate = asyncio.Event()

            async def slow(fn, *args):   # the build waits until the re-list is in
                builds.append(fn)
                await gate.wait()
                return fn(*args)

            building = asyncio.ensure_future(store.orders.ensure(spec, slow))
            await asyncio.sleep(0)
            await store.relist(new, "2", inline)
            gate.set()
            return await building

        limit, orders.OFF_LOOP_BUILD = orders.OFF_LOOP_BUILD, 0
        try:
            with _path(large):
                index = asyncio.run(scenario())
        finally:
            orders.OFF_LOOP_BUILD = limit
        # a small re-list's changes reach the build as events; a swap makes it build again
        assert len(builds) == (2 if large else 1)
        fresh = SortedIndex(spec, store.rows.values(), KIND.properties)
        assert list(index.all) == list(fresh.all)
        assert index is store.orders.get(spec)
