"""The watch cache's pure parts: selectors, slim records, the store's order and indexes, and
selection over precomputed keys (the same answers as over summaries)."""

import random
import sys

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import slim
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import Store
from dashboard_api.kinds import joins, table as kinds
from dashboard_api.query import properties, rows as query_rows, selectors
from dashboard_api.query.listquery import Query
from dashboard_api.summaries.related import Related


def test_label_selectors_as_the_api_server_reads_them():
    cases = [
        ("app=web", {"app": "web"}, True), ("app=web", {"app": "db"}, False),
        ("app==web,tier!=db", {"app": "web", "tier": "fe"}, True),
        ("tier!=db", {}, True),
        ("tier in (a, b),app", {"tier": "b", "app": ""}, True),
        ("tier in (a,b)", {}, False),
        ("tier notin (a,b)", {}, True), ("tier notin (a,b)", {"tier": "a"}, False),
        ("!legacy", {"legacy": "1"}, False), ("!legacy", {}, True),
        ("", {"x": "y"}, True),
    ]
    for text, labels, expected in cases:
        assert selectors.labels(text)(labels) is expected, (text, labels)
    for unreadable in ("app=web=x", "a in b", "!a in (x)", "a > 3"):
        assert selectors.labels(unreadable) is None, unreadable


def test_field_selectors_only_for_known_paths():
    pod = {"metadata": {"name": "p", "namespace": "n"}, "spec": {"nodeName": "n1"},
           "status": {"phase": "Running"}}
    match = selectors.fields("spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed")
    assert match(pod) and not match(dict(pod, spec={"nodeName": "n2"}))
    assert selectors.fields("metadata.name==p")(pod)
    assert selectors.fields("spec.restartPolicy=Always") is None
    assert selectors.fields("")(pod)


def test_slim_drops_what_no_list_reads_and_keeps_the_rest():
    pod = {"metadata": {"name": "p", "managedFields": [{"big": 1}], "labels": {"a": "b"},
                        "annotations": {slim.LAST_APPLIED: "{...}", "keep": "me"}},
           "spec": {"nodeName": "n", "tolerations": [{}], "volumes": [
               {"name": "v", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "t"}],
               "containers": [{"name": "c", "image": "i", "env": [{"name": "PASSWORD",
                                                                    "value": "hunter2"}],
                               "resources": {"requests": {"cpu": "1"}}, "livenessProbe": {}}]},
           "status": {"phase": "Running"}}
    out = slim.slim(kinds.get("pod"), pod)
    assert out["metadata"] == {"name": "p", "labels": {"a": "b"}, "annotations": {"keep": "me"}}
    assert out["spec"] == {"nodeName": "n", "containers": [
        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
        "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}]}
    assert out["status"] == {"phase": "Running"}
    assert "managedFields" in pod["metadata"] and pod["spec"]["containers"][0]["env"]  # unchanged
    deployment = {"metadata": {}, "spec": {"replicas": 2, "template": {"spec": {"containers": [
        {"name": "c", "env": [{"name": "K", "value": "v"}], "image": "i"}]}}}}
    assert slim.slim(kinds.get("deployment"), deployment)["spec"] == {"replicas": 2, "template": {
        "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    cron = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "env": [{"name": "K", "value": "v"}]}]}}}}}}
    assert "env" not in str(slim.slim(kinds.get("cronjob"), cron))
    assert "data" not in slim.slim(kinds.get("configmap"), {"metadata": {}, "data": {"k": "v"}})


def _pod(ns, name, created="2024-01-01T00:00:00Z", owner=None, node=None, phase="Running"):
    meta = {"namespace": ns, "name": name, "uid": ns + "/" + name, "creationTimestamp": created}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "controller": True, "kind": "ReplicaSet",
                                    "name": owner}]
    return {"metadata": meta, "spec": {"nodeName": node} if node else {},
            "status": {"phase": phase} if phase else {}}


def test_store_keeps_the_api_servers_order_and_indexes():
    kind = kinds.get("pod")
    store = Store(kind, {"controller": lambda o: [(o["metadata"].get("ownerReferences") or
                                                    [{}])[0].get("uid")] if o["metadata"].get(
        "ownerReferences") else []})
    names = [("a", "x"), ("a-b", "y"), ("a", "b"), ("b", "a"), ("a.c", "z")]
    store.replace([row_of(kind, _pod(ns, n, owner="rs1" if n in "xy" else None))
                   for ns, n in names], "10")
    order = [(r.namespace, r.name) for r in store.scope(())]
    # etcd's key order: "a-b/y" < "a.c/z" < "a/b" < "a/x" < "b/a" (by namespace + "/").
    assert order == sorted(names, key=lambda p: p[0] + "/" + p[1])
    assert [(r.namespace, r.name) for r in store.scope(("b", "a"))] == [
        ("b", "a"), ("a", "b"), ("a", "x")]
    assert [r.name for r in store.indexes["controller"].get("rs1")] == ["y", "x"]
    generation = store.generation
    scope = store.scope(())
    store.apply("ADDED", row_of(kind, _pod("a", "c", owner="rs1")), "11")
    store.apply("DELETED", row_of(kind, _pod("a-b", "y")), "12")
    assert store.generation == generation + 2 and store.resource_version == "12"
    assert [(r.namespace, r.name) for r in store.scope(())] == [
        ("a.c", "z"), ("a", "b"), ("a", "c"), ("a", "x"), ("b", "a")]
    assert len(scope) == 5  # what an earlier reader holds is never changed
    assert [r.name for r in store.indexes["controller"].get("rs1")] == ["c", "x"]
    cached = store.scope(("a",), objects=True)
    assert [o["metadata"]["name"] for o in cached] == ["b", "c", "x"]
    assert [o["metadata"]["name"] for o in cached.lookup("controller").get("rs1")] == ["c", "x"]


_WORDS = st.sampled_from(["web", "db", "api-1", "api-10", "x", ""])
_TIMES = st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.5Z",
                          "2023-05-01T10:00:00Z", None])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_WORDS, _WORDS, _TIMES,
                         st.sampled_from(["Running", "Pending", "Succeeded", None])),
                max_size=25),
       st.lists(st.tuples(st.sampled_from(["name", "namespace", "creationTimestamp", "status",
                                           "nope"]), st.booleans()), max_size=3),
       st.lists(st.tuples(st.sampled_from(["name", "namespace", "status", "nope"]),
                          st.sampled_from(["", "a", "1", "web"])), max_size=2),
       st.integers(0, 4), st.integers(0, 3))
def test_selection_over_keys_equals_selection_over_items(pods, sorts, filters, per_page, page):
    kind = kinds.get("pod")
    raw = [_pod(ns or "default", "%s-%d" % (name, i), created, phase=phase)
           for i, (name, ns, created, phase) in enumerate(pods)]
    random.Random(1).shuffle(raw)
    query = Query(filters, sorts, per_page, page)
    items = [kind.item(o, Related()) for o in raw]
    expected_page, expected_total = query_rows.select_items(items, query, kind.properties)
    rows = [row_of(kind, o) for o in raw]
    assert all(r.keys == properties.keys_of(i, kind.properties) for r, i in zip(rows, items))
    order, total = query_rows.select_rows(rows, query, kind.properties)
    got = [r.obj["metadata"]["name"] for r in query_rows.paginate(order, query)]
    assert total == expected_total
    assert got == [i["objectMeta"]["name"] for i in expected_page]


_CONDITIONS = st.sampled_from([[], [{"type": "Ready", "status": "False"}],
                               [{"type": "Initialized", "status": "True"},
                                {"type": "Ready", "status": "True"}]])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["Running", "Pending", "Failed", "Succeeded", None]),
                          _CONDITIONS, st.booleans()), max_size=12),
       st.lists(st.tuples(st.integers(0, 11), st.sampled_from(["Warning", "Normal", None]),
                          st.sampled_from(["BackOff", "Pulled", "FailedMount"])), max_size=10))
def test_pod_status_from_facts_equals_status_from_pods(pods, events):
    """The cache's precomputed facts give the status block the pods themselves give, and both
    match the definition: a pod's bucket, failed when it has warnings."""
    from dashboard_api.summaries import pods as pod_summaries
    from dashboard_api.summaries.events import warnings
    from dashboard_api.summaries.podstatus import list_phase
    raw = []
    for i, (phase, conditions, deleting) in enumerate(pods):
        pod = _pod("ns", "p%d" % i, phase=phase)
        pod["status"]["conditions"] = conditions
        if deleting:
            pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        raw.append(pod)
    rel = Related()
    rel["events"] = [{"metadata": {"name": "e%d" % n}, "involvedObject": {"uid": "ns/p%d" % i},
                      "type": t, "reason": reason} for n, (i, t, reason) in enumerate(events)]
    expected = {"running": 0, "pending": 0, "failed": 0, "succeeded": 0, "terminating": 0}
    for pod in raw:
        bucket = list_phase(pod, bool(warnings((pod,), rel)))
        if bucket:
            expected[bucket] += 1
    assert pod_summaries.list_status(raw, rel) == expected
    facts = [pod_summaries.status_facts(p) for p in raw]
    assert pod_summaries.list_status(None, rel, facts=facts) == expected


def test_views_compute_once_per_version_and_keep_only_the_newest():
    import asyncio

    from dashboard_api.cache.memo import Memo

    calls = []

    async def scenario():
        views = Memo(size=4)

        def computing(value):
            async def compute():
                calls.append(value)
                await asyncio.sleep(0.01)
                return value
            return compute

        shape = ("pod", 1, (), (), (), True)
        together = await asyncio.gather(*(views.get((shape, (1,)), computing("v1"))
                                          for _ in range(5)))
        assert together == ["v1"] * 5 and calls == ["v1"]
        assert await views.get((shape, (1,)), computing("again")) == "v1"
        assert await views.get((shape, (2,)), computing("v2")) == "v2"
        assert len(views._done) == 1  # the older version is gone
        for n in range(6):
            await views.get((("other", n), (1,)), computing(n))
        assert len(views._done) == 4

    asyncio.run(scenario())
    assert calls == ["v1", "v2", 0, 1, 2, 3, 4, 5]


def test_a_change_in_one_namespace_keeps_the_others_versions():
    kind = kinds.get("pod")
    store = Store(kind)
    store.replace([row_of(kind, _pod("a", "x")), row_of(kind, _pod("b", "y"))], "1")
    a, b, every = store.version(("a",)), store.version(("b",)), store.version(())
    store.apply("ADDED", row_of(kind, _pod("b", "z")), "2")
    assert store.version(("a",)) == a and store.version(("b",)) != b
    assert store.version(()) != every
    assert store.scope(("a",)).view_key[1] == a
    store.replace([row_of(kind, _pod("a", "x"))], "3")  # a full LIST changes every version
    assert store.version(("a",)) != a


def test_a_store_whose_objects_come_and_go_keeps_its_rows_table_at_its_natural_size():
    """Issue #41's soak: 200,000 events, 50 replaced a second, doubled the store's table once
    each had been replaced (CPython sizes a table that fills after deletions for three times
    its entries). The store makes it again at a fresh dict's size; what it holds is unchanged."""
    kind = kinds.get("event")
    n = 6000

    def event(i):
        return row_of(kind, {"metadata": {"name": "e-%05d" % i, "namespace": "ns"}})
    store = Store(kind)
    store.replace([event(i) for i in range(n)], "1")
    for i in range(n):   # every event replaced once, as events come and go
        store.apply("DELETED", event(i), str(2 * i))
        store.apply("ADDED", event(n + i), str(2 * i + 1))
    assert sys.getsizeof(store.rows) <= sys.getsizeof(dict(store.rows))
    assert sorted(store.rows) == [("ns", "e-%05d" % i) for i in range(n, 2 * n)]
    assert [row.name for row in store.scope(())] == ["e-%05d" % i for i in range(n, 2 * n)]


def test_an_update_that_keeps_its_buckets_takes_its_place_in_them():
    """Issue #41's soak: a pod changed (its owner and node the same) was taken out of its
    controller's bucket and put back, which leaves a dummy entry behind; churned so, each
    bucket's table doubled. The changed row now takes its place, and the bucket keeps its size;
    a change of owner still moves it, and an index with watchers still hears it out and in."""
    kind = kinds.get("pod")
    heard = []

    class Watcher:
        def added(self, source, value, row, first):
            heard.append(("added", value, row.obj["status"]["phase"], first))

        def removed(self, source, value, row, last):
            heard.append(("removed", value, row.obj["status"]["phase"], last))

        def reset(self):
            heard.clear()

    store = Store(kind, {"controller": joins.controller, "pending": joins.pending_controller})
    store.indexes["pending"].watchers.append(Watcher())
    pods = [row_of(kind, _pod("ns", "p%02d" % i, owner="rs1")) for i in range(20)]
    store.replace(pods, "1")
    bucket = store.indexes["controller"].buckets["rs1"]
    size = sys.getsizeof(bucket)
    for version in range(200):
        phase = "Pending" if version % 2 else "Running"
        store.apply("MODIFIED", row_of(kind, _pod("ns", "p%02d" % (version % 20), owner="rs1",
                                                  phase=phase)), str(version + 2))
    assert store.indexes["controller"].buckets["rs1"] is bucket
    assert sys.getsizeof(bucket) == size
    assert list(bucket.values()) == [store.rows[("ns", "p%02d" % i)] for i in range(20)]
    assert [r.name for r in store.indexes["controller"].get("rs1")] == \
        ["p%02d" % i for i in range(20)]
    # the watched index: the odd pods pending, each heard in, then out and in when changed
    assert heard[:2] == [("added", "rs1", "Pending", True), ("added", "rs1", "Pending", False)]
    assert heard[10:12] == [("removed", "rs1", "Pending", False),
                            ("added", "rs1", "Pending", False)]
    assert [r.name for r in store.indexes["pending"].get("rs1")] == \
        ["p%02d" % i for i in range(1, 20, 2)]
    store.apply("MODIFIED", row_of(kind, _pod("ns", "p00", owner="rs2")), "300")
    assert [r.name for r in store.indexes["controller"].get("rs2")] == ["p00"]
    assert ("ns/", "p00") not in bucket
    assert len(store.indexes["controller"].buckets["rs1"]) == 19


def test_an_index_whose_buckets_come_and_go_keeps_the_table_a_copy_would_have():
    """Issue #41's soak: an object's events come and go, and so do their buckets in the index
    by involved object. Each bucket gone leaves a dummy entry in the index's table, and a table
    full of them was made again for three times its buckets: twice a copy's size, for good.
    Now the table is made again at its natural size whenever it grows, and answers the same."""
    kind = kinds.get("pod")
    store = Store(kind, {"controller": joins.controller})
    index = store.indexes["controller"]
    live = 5000
    store.replace([row_of(kind, _pod("ns", "p%05d" % i, owner="rs%05d" % i))
                   for i in range(live)], "1")
    for i in range(live, 6 * live):   # the oldest pod goes, with its bucket; a new one comes
        gone = store.rows[("ns", "p%05d" % (i - live))]
        store.apply("DELETED", gone, str(2 * i))
        store.apply("ADDED", row_of(kind, _pod("ns", "p%05d" % i, owner="rs%05d" % i)),
                    str(2 * i + 1))
    assert len(index.buckets) == live
    assert sys.getsizeof(index.buckets) == sys.getsizeof(dict(index.buckets))
    assert [r.name for r in index.get("rs%05d" % (6 * live - 1))] == ["p%05d" % (6 * live - 1)]
    assert not index.get("rs%05d" % (5 * live - 1))
    assert sorted(index.buckets) == ["rs%05d" % i for i in range(5 * live, 6 * live)]
