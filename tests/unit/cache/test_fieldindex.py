"""The watch cache's field indexes (cache/fieldindex.py) answer a field selector's equality as
a walk of the namespaces does (issue #30): an object's events by involvedObject.name and kind,
a node's pods by spec.nodeName, through events, updates, deletions and re-lists (both ways)."""

import asyncio
import contextlib

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import relists
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import Store
from dashboard_api.kinds import table as kinds
from dashboard_api.lists.cachesource import _narrowed
from dashboard_api.query import selectors

EVENT, POD = kinds.get("event"), kinds.get("pod")
_NAMESPACES = ["a", "a-b", "b"]
_SCOPES = [(), ("a",), ("b", "a"), ("a-b", "c")]
_INVOLVED = ["web", "web-0", "db", ""]
_KINDS = ["Pod", "Service", "Node"]


def _event(ns, name, involved, kind, version):
    return {"metadata": {"namespace": ns, "name": name, "uid": ns + "/" + name,
                         "resourceVersion": version},
            "involvedObject": {"name": involved, "kind": kind, "uid": involved + kind},
            "reason": "Started", "type": "Normal"}


def _pod(ns, name, node, version):
    return {"metadata": {"namespace": ns, "name": name, "uid": ns + "/" + name,
                         "resourceVersion": version},
            "spec": {"nodeName": node} if node else {}, "status": {"phase": "Running"}}


async def inline(fn, *args):
    return fn(*args)


@contextlib.contextmanager
def _relisting(large):
    saved = (relists.SMALL_RELIST, relists.SMALL_SHARE)
    relists.SMALL_RELIST, relists.SMALL_SHARE = (-1, -1) if large else (10 ** 9, 1)
    try:
        yield
    finally:
        relists.SMALL_RELIST, relists.SMALL_SHARE = saved


def _walked(store, scope, fields):
    match = selectors.fields(fields)
    return [obj for obj in store.scope(scope, objects=True) if match(obj)]


def _narrowed_answer(store, scope, fields):
    candidates = _narrowed(store, scope, fields)
    assert candidates is not None, fields   # the index answered, no walk
    match = selectors.fields(fields)
    return [obj for obj in candidates if match(obj)]


def _check_events(store):
    for scope in _SCOPES:
        for involved in _INVOLVED[:-1]:
            for fields in ["involvedObject.name=" + involved,
                           "involvedObject.name==%s,involvedObject.kind=Pod" % involved,
                           "involvedObject.kind=Service,involvedObject.name=" + involved]:
                assert _narrowed_answer(store, scope, fields) == \
                    _walked(store, scope, fields), (scope, fields)


_EVENT_OP = st.tuples(st.sampled_from(["put", "put", "delete"]), st.sampled_from(_NAMESPACES),
                      st.sampled_from(["e%d" % i for i in range(8)]),
                      st.sampled_from(_INVOLVED), st.sampled_from(_KINDS))


@settings(max_examples=120, deadline=None)
@given(st.lists(_EVENT_OP, max_size=40), st.integers(0, 40), st.booleans())
def test_an_objects_events_from_the_index_are_the_walks(ops, relist_at, large):
    store = Store(EVENT, EVENT.indexes)
    store.replace([], "1")
    for i, (op, ns, name, involved, kind) in enumerate(ops):
        if i == relist_at:   # a re-list finds the store as it is, every row a new one
            with _relisting(large):
                asyncio.run(store.relist(
                    [row_of(EVENT, _event(r.namespace, r.name,
                                          r.obj["involvedObject"]["name"],
                                          r.obj["involvedObject"]["kind"], "r"))
                     for r in store.rows.values()], str(i), inline))
        row = row_of(EVENT, _event(ns, name, involved, kind, str(i)))
        store.apply("DELETED" if op == "delete" else "ADDED", row, str(i))
        _check_events(store)
    _check_events(store)


_POD_OP = st.tuples(st.sampled_from(["put", "put", "delete"]), st.sampled_from(_NAMESPACES),
                    st.sampled_from(["p%d" % i for i in range(8)]),
                    st.sampled_from([None, "n1", "n2"]))


@settings(max_examples=120, deadline=None)
@given(st.lists(_POD_OP, max_size=40), st.integers(0, 40), st.booleans())
def test_a_nodes_pods_through_changes_and_relists_are_the_walks(ops, relist_at, large):
    store = Store(POD, POD.indexes)
    store.replace([], "1")
    for i, (op, ns, name, node) in enumerate(ops):
        if i == relist_at:
            with _relisting(large):
                asyncio.run(store.relist(
                    [row_of(POD, _pod(r.namespace, r.name, r.obj["spec"].get("nodeName"), "r"))
                     for r in store.rows.values()], str(i), inline))
        store.apply("DELETED" if op == "delete" else "MODIFIED",
                    row_of(POD, _pod(ns, name, node, str(i))), str(i))
        for scope in _SCOPES:
            for value in ("n1", "n2"):
                fields = "spec.nodeName=%s,status.phase!=Failed" % value
                assert _narrowed_answer(store, scope, fields) == \
                    _walked(store, scope, fields), (scope, fields)


def test_a_nodes_pods_from_the_index_are_the_walks():
    store = Store(POD, POD.indexes)
    store.replace([row_of(POD, _pod(ns, "p%d" % i, "n%d" % (i % 3) if i % 4 else None, "1"))
                   for ns in _NAMESPACES for i in range(12)], "1")
    store.apply("ADDED", row_of(POD, _pod("a", "p1", "n2", "2")), "2")     # moved to n2
    store.apply("DELETED", row_of(POD, _pod("b", "p2", "n2", "3")), "3")
    for scope in _SCOPES:
        for node in ("n0", "n1", "n2"):
            fields = "spec.nodeName=" + node
            assert _narrowed_answer(store, scope, fields) == _walked(store, scope, fields)
    assert [o["metadata"]["name"] for o in _narrowed_answer(store, ("a",), "spec.nodeName=n2")] \
        == ["p1", "p11", "p2", "p5"]


def test_selectors_without_an_indexed_equality_walk():
    store = Store(EVENT, EVENT.indexes)
    store.replace([row_of(EVENT, _event("a", "e", "web", "Pod", "1"))], "1")
    for fields in ("involvedObject.kind=Pod", "involvedObject.name!=web", "involvedObject.name=",
                   "", None):
        assert _narrowed(store, (), fields) is None
