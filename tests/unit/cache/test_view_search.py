"""A search in a list's filter (``filterBy=name,<query>``, query/search.py) gives the same page
from the watch cache (cache/view.py: a filtered index kept per event, a broad filter's walk, or
a selection when the match reads related reads) as from the same objects in memory (query/
page.py ListedRows, the pass-through path), after any sequence of events (hypothesis)."""

import asyncio

from hypothesis import given, settings, strategies as st

from dashboard_api.cache.memo import Memo
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import Store
from dashboard_api.cache.view import StoreView
from dashboard_api.kinds import table as kinds
from dashboard_api.query import search
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import ListedRows
from dashboard_api.query.rows import Row
from dashboard_api.summaries.related import Related

_NAMESPACES = ["a", "a-b", "b"]
_NAMES = ["web", "web-1", "Web-2", "db", "api", "x"]
_LABELS = st.dictionaries(st.sampled_from(["app", "tier", "k8s.io/part"]),
                          st.sampled_from(["web", "db", "", "front"]), max_size=2)
_STATES = [None, "CrashLoopBackOff", "ImagePullBackOff"]
_TERMS = ["web", "WEB", "1", "db", "name:web-", "label:app=web", "label:app=web|db",
          "label:app!=web", "label:tier", "label:!app", "label:k8s.io/part=", "ns:a",
          "ns:a|b", "status:running", "status:crash", "status:pending|crash",
          "node:n1", "node:n2|n3", "image:nginx", "image:BUSY", "kind:pod", "kind:node"]
_SORTS = st.lists(st.tuples(st.sampled_from(["name", "creationTimestamp", "status"]),
                            st.booleans()), max_size=2)


def _pod(ns, name, labels, node, images, phase, waiting, created):
    return {"metadata": {"namespace": ns, "name": name, "uid": ns + "/" + name,
                         "labels": labels, "creationTimestamp": created},
            "spec": {"nodeName": node,
                     "containers": [{"name": "c%d" % i, "image": image}
                                    for i, image in enumerate(images)]},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "c0", "ready": not waiting,
                 "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}]}}


_POD = st.builds(_pod, st.sampled_from(_NAMESPACES), st.sampled_from(_NAMES), _LABELS,
                 st.sampled_from(["n1", "n2", "n3", ""]),
                 st.lists(st.sampled_from(["nginx:1", "busybox", "reg/app:2"]), min_size=1,
                          max_size=2),
                 st.sampled_from(["Running", "Pending"]), st.sampled_from(_STATES),
                 st.sampled_from(["2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z", None]))
_EVENT = st.tuples(st.sampled_from(["ADDED", "MODIFIED", "DELETED"]), _POD)
_QUERY = st.lists(st.sampled_from(_TERMS), max_size=3).map(" ".join)
_SCOPE = st.sampled_from([(), ("a",), ("a", "a-b"), ("b",)])


async def inline(fn, *args):
    return fn(*args)


def _from_memory(kind, objects, scope, query, rel):
    """The page the pass-through path gives: the objects as a LIST returns them, in
    memory."""
    rows = [Row(obj, None, None, None) for obj in objects
            if not scope or obj["metadata"]["namespace"] in scope]
    return asyncio.run(ListedRows(kind, rows).page(query, False, rel, inline))


def _listed(store, scope):
    """The store's objects in the API server's order (a LIST's)."""
    return [row.obj for row in store.scope(scope)]


@settings(max_examples=200, deadline=None)
@given(st.lists(_POD, max_size=20), st.lists(_EVENT, max_size=25), _QUERY, _QUERY, _SORTS,
       _SCOPE, st.integers(0, 4), st.integers(0, 3))
def test_a_search_pages_the_same_from_the_cache_and_from_memory(initial, events, before, after,
                                                                sorts, scope, per_page, page):
    kind = kinds.get("pod")
    store = Store(kind)
    store.replace([row_of(kind, p) for p in initial], "1")
    rel = Related()
    rel["events"] = []
    early = Query((("name", search.parse(before)),), sorts, per_page, page)
    # a filtered index (or a broad walk) made before the events is kept per event
    asyncio.run(StoreView(store, kind, scope, Memo()).page(early, False, rel, inline))
    for n, (what, pod) in enumerate(events):
        store.apply(what, row_of(kind, pod), str(n + 2))
    memo = Memo()
    for text in (before, after):
        query = Query((("name", search.parse(text)),), sorts, per_page, page)
        got = asyncio.run(StoreView(store, kind, scope, memo).page(query, False, rel, inline))
        expected = _from_memory(kind, _listed(store, scope), scope, query, rel)
        assert [(r.namespace, r.name) for r in got.rows] == [
            (r.obj["metadata"]["namespace"], r.obj["metadata"]["name"])
            for r in expected.rows], text
        assert got.total == expected.total


_SET_NAMES = ["web", "db", "api"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_SET_NAMES), st.sampled_from(["a", "b"])),
                max_size=6, unique=True),
       st.lists(st.tuples(st.sampled_from(_SET_NAMES), st.sampled_from(["Running", "Pending"]),
                          st.booleans()), max_size=8),
       st.lists(st.sampled_from(["status:running", "status:pending", "status:failed",
                                 "image:redis", "web", "label:app=web"]), min_size=1,
                max_size=2).map(" ".join))
def test_a_workloads_status_is_matched_through_its_related_reads_on_both_paths(sets, pods,
                                                                               text):
    """A replica set's status is read from its pods and their events: the cache answers it by
    a walk of its sorted index with those reads (never a filtered index, which could not keep
    it), matched by the sets of UIDs of each status, as the status each item shows."""
    kind = kinds.get("replicaset")
    objects = [{"metadata": {"namespace": ns, "name": name, "uid": "rs-%s-%s" % (ns, name),
                             "labels": {"app": name}},
                "spec": {"template": {"spec": {"containers": [
                    {"name": "c", "image": "redis" if name == "db" else "nginx"}]}}}}
               for name, ns in sets]
    rel = Related()
    rel["pods"] = [{"metadata": {"namespace": "a", "name": "p%d" % i, "uid": "p%d" % i,
                                 "ownerReferences": [{"uid": "rs-a-" + owner,
                                                      "controller": True}]},
                    "status": {"phase": phase}} for i, (owner, phase, _w) in enumerate(pods)]
    rel["events"] = [{"metadata": {"name": "e%d" % i}, "type": "Warning", "reason": "BackOff",
                      "involvedObject": {"uid": "p%d" % i}}
                     for i, (_o, _p, warned) in enumerate(pods) if warned]
    store = Store(kind)
    store.replace([row_of(kind, o) for o in objects], "1")
    query = Query((("name", search.parse(text)),), (("name", True),), 10, 1)
    view = StoreView(store, kind, (), Memo())
    got = asyncio.run(view.page(query, False, rel, inline))
    expected = _from_memory(kind, _listed(store, ()), (), query, rel)
    assert [r.name for r in got.rows] == [r.obj["metadata"]["name"] for r in expected.rows]
    assert got.total == expected.total
    # the status as sets of UIDs (what a status: term matches by) is the status each item shows
    shown = {(r.namespace, r.name): kind.search.status(r, rel) for r in store.scope(())}
    for status in ("Failed", "Pending", "Running"):
        bound = search.parse("status:" + status).bind(kind, rel)
        assert sorted((r.namespace, r.name) for r in bound.filter(store.scope(()))) == sorted(
            key for key, text in shown.items() if text == status)
