"""Related reads from the watch cache cost what is read of them, not the size of their kind
(issue #30): a list of every cached object is made only when a summary iterates it, and the
pods' list status reads which pods have a Warning event from an index kept per event."""

import asyncio
import concurrent.futures

from dashboard_api.cache import slim
from dashboard_api.cache.joined import join_stores
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import Store
from dashboard_api.kinds import table as kinds
from dashboard_api.summaries import pods
from dashboard_api.summaries.common import resource_status
from dashboard_api.summaries.related import Related
from dashboard_api.summaries.workloads import items as workloads, status as workload_status


def _event(ns, name, uid, type_="Warning", reason="BackOff"):
    return {"metadata": {"namespace": ns, "name": name, "uid": "e-" + name},
            "involvedObject": {"kind": "Pod", "namespace": ns, "name": uid, "uid": uid},
            "type": type_, "reason": reason, "message": "m"}


def _events_store(events):
    kind = kinds.get("event")
    store = Store(kind, kind.indexes)
    store.replace([row_of(kind, slim.slim(kind, ev)) for ev in events], "1")
    return kind, store


def _pod(ns, name, ready=False):
    return {"metadata": {"namespace": ns, "name": name, "uid": name,
                         "creationTimestamp": "2024-01-01T00:00:00Z"},
            "status": {"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True" if ready else "False"}]}}


def test_a_related_read_makes_no_list_until_iterated():
    kind, store = _events_store([_event("a", "e%d" % i, "p%d" % (i % 3)) for i in range(6)])
    related = store.related(("a",))
    assert related.lookup("involved").get("p1") and len(related) == 6 and related
    assert related.view_key == (id(store), store.version(("a",)), ("a",))
    assert store._scopes == {}                    # lookups, len, version: no list made
    assert [ev["metadata"]["name"] for ev in related] == ["e0", "e1", "e2", "e3", "e4", "e5"]
    assert related == store.scope(("a",), objects=True) and related[0]["metadata"]["name"] == "e0"
    store.apply("ADDED", row_of(kind, slim.slim(kind, _event("a", "e6", "p0"))), "2")
    assert store.related(()).view_key[1] == store.generation and store._scopes == {}


def test_a_related_read_iterated_in_another_thread_is_listed_on_the_loop():
    async def main():
        _kind, store = _events_store([_event("a", "e%d" % i, "p") for i in range(3)])
        related = store.related(())
        loop = asyncio.get_running_loop()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            names = await loop.run_in_executor(
                pool, lambda: [ev["metadata"]["name"] for ev in related])
        return names
    assert asyncio.run(main()) == ["e0", "e1", "e2"]


def test_pod_list_status_from_the_warned_index_as_from_every_pods_events():
    events = [_event("a", "w1", "p1"), _event("a", "n1", "p2", "Normal", "Pulled"),
              _event("a", "w3", "p3"), _event("a", "n3", "p3", "Normal", "Started"),
              _event("b", "w4", "p4")]
    kind, store = _events_store(events)
    raw = [_pod("a", "p1"), _pod("a", "p2"), _pod("a", "p3", ready=True), _pod("b", "p4"),
           _pod("b", "p5")]
    expected = pods.list_status(raw, Related(events=events))
    facts = [pods.status_facts(p) for p in raw]
    counts, pending = {}, {}
    for fact in facts:
        bucket, uid = pods.status_split(fact)
        if bucket:
            counts[bucket] = counts.get(bucket, 0) + 1
        if uid:
            pending.setdefault(bucket, {})[uid] = fact
    cached = Related(events=store.related(()))
    assert set(cached.warned_objects()) == {"p1", "p3", "p4"}
    assert pods.status_counted(counts, {"a": pending}, cached) == expected
    assert pods.status_counted(counts, {"a": pending}, Related(events=events)) == expected
    assert expected["failed"] == 2                    # p1 and p4: not ready, warned
    # the Warning of p4 expires: p4 is counted by its facts alone again
    store.apply("DELETED", row_of(kind, slim.slim(kind, events[-1])), "2")
    assert set(cached.warned_objects()) == {"p1", "p3"}
    assert pods.status_counted(counts, {"a": pending}, Related(events=store.related(()))) == \
        pods.list_status(raw, Related(events=events[:-1]))


def test_a_templates_quantities_are_parsed_once_for_its_pods():
    from fractions import Fraction

    from dashboard_api.summaries import quantity
    containers = [{"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "1Gi"},
                                              "limits": {"cpu": "1"}}}]
    first = quantity.effective({"containers": containers})
    parsed = quantity._EFFECTIVE[(id(containers), id(None), id(None))]
    again = quantity.effective({"containers": containers, "nodeName": "n2"})
    assert first == again == ({"cpu": Fraction(1, 10), "memory": 2**30}, {"cpu": 1})
    assert quantity._EFFECTIVE[(id(containers), id(None), id(None))] is parsed
    first[0]["cpu"] = 7                                # an answer is the caller's own copy
    assert quantity.effective({"containers": containers})[0]["cpu"] == Fraction(1, 10)
    other = [dict(containers[0], resources={"requests": {"cpu": "2"}})]
    assert quantity.effective({"containers": other, "overhead": {"cpu": "1"}}) == (
        {"cpu": 3}, {})


def _store(name, objects):
    kind = kinds.get(name)
    store = Store(kind, kind.indexes)
    store.replace([row_of(kind, slim.slim(kind, obj)) for obj in objects], "1")
    return kind, store


def _owned(pod, owner, phase="Running"):
    pod["metadata"]["ownerReferences"] = [{"uid": owner, "controller": True}]
    pod["status"]["phase"] = phase
    return pod


def test_owned_workloads_list_status_from_the_pod_indexes_as_from_every_workloads_pods():
    """Replica sets' (and the like's) list status: failed when a not-ready pod of theirs has a
    Warning event, else pending when one pends, else running; counted from the watch cache's
    per-event indexes (issue #30) as the walk of every workload's pods counts it."""
    sets = [{"metadata": {"namespace": ns, "name": n, "uid": n,
                          "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": {"replicas": 1}}
            for ns, n in (("a", "rs1"), ("a", "rs2"), ("a", "rs3"), ("b", "rs4"), ("b", "rs5"))]
    raw_pods = [_owned(_pod("a", "p1"), "rs1"), _owned(_pod("a", "p2"), "rs2", "Pending"),
                _owned(_pod("a", "p3", ready=True), "rs3"),
                _owned(_pod("b", "p4"), "rs4", "Pending"), _owned(_pod("b", "p5"), "rs5")]
    events = [_event("a", "w1", "p1"), _event("a", "w3", "p3"), _event("b", "w4", "p4")]
    _ek, events_store = _events_store(events)
    pod_kind, pod_store = _store("pod", raw_pods)
    rs_kind, rs_store = _store("replicaset", sets)
    walk = workload_status._status_by(workloads.owned_pods)

    def check(scope, expected):
        cached = Related(pods=pod_store.related(scope), events=events_store.related(scope))
        counts, groups = rs_store.status_tally(scope)
        in_scope = [s for s in sets if not scope or s["metadata"]["namespace"] in scope]
        assert walk(in_scope, Related(pods=raw_pods, events=events)) == expected
        assert rs_kind.status_counted(counts, groups, cached) == expected
        assert rs_kind.list_status(in_scope, cached) == expected
        assert rs_kind.list_status(None, Related(pods=raw_pods, events=events),
                                   facts=[s["metadata"]["uid"] for s in in_scope]) == expected
    # rs1, rs4: a warned not-ready pod; rs2 pends; rs3's warned pod is ready; rs5 runs
    check((), dict(resource_status(), failed=2, pending=1, running=2))
    check(("a",), dict(resource_status(), failed=1, pending=1, running=1))
    # p2 starts running, p5 pends: the counters follow the pod events
    raw_pods[1] = _owned(_pod("a", "p2"), "rs2")
    raw_pods[4] = _owned(_pod("b", "p5"), "rs5", "Pending")
    for pod in (raw_pods[1], raw_pods[4]):
        pod_store.apply("MODIFIED", row_of(pod_kind, slim.slim(pod_kind, pod)), "2")
    check((), dict(resource_status(), failed=2, pending=1, running=2))
    check(("b",), dict(resource_status(), failed=1, pending=1))


def test_warned_controllers_kept_per_event_by_the_join_of_pods_and_events():
    """The controllers of the not-ready pods with a Warning event, kept per event by the watch
    cache's join of the two stores (cache/joined.py), are those a walk of every pod finds,
    through pod and event changes and full LISTs of either kind."""
    raw_pods = [_owned(_pod("a", "p1"), "rs1"), _owned(_pod("a", "p2"), "rs2"),
                _owned(_pod("a", "p3", ready=True), "rs3"), _owned(_pod("b", "p4"), "rs1"),
                _pod("b", "p5")]
    events = [_event("a", "w1", "p1"), _event("a", "w3", "p3"), _event("b", "w4", "p4"),
              _event("b", "w5", "p5"), _event("a", "n2", "p2", "Normal", "Pulled")]
    event_kind, events_store = _events_store(events)
    pod_kind, pod_store = _store("pod", raw_pods)
    join_stores({"pod": pod_store, "event": events_store})

    def check(expected):
        walked = Related(pods=list(raw_pods), events=list(events)).warned_controllers()
        cached = Related(pods=pod_store.related(()), events=events_store.related(()))
        assert set(cached.warned_controllers()) == set(walked) == expected
        # a pod list met with events not from the cache: the join is not used
        assert set(Related(pods=pod_store.related(()), events=list(events))
                   .warned_controllers()) == expected
        # the pods' list status: the join "warned_moves" counts what a walk finds
        counts, pending = pod_store.status_tally(())
        walked_status = pods.list_status(raw_pods, Related(events=list(events)))
        assert Related(events=events_store.related(())).warned_moves() is not None
        for rel in (Related(events=events_store.related(())), Related(events=list(events))):
            assert pod_kind.status_counted(counts, pending, rel) == walked_status

    def pod_event(i, pod, type_="MODIFIED"):
        if type_ == "DELETED":
            raw_pods.remove(pod)
        else:
            raw_pods[i] = pod
        pod_store.apply(type_, row_of(pod_kind, slim.slim(pod_kind, pod)), "2")

    def event_event(ev, type_="ADDED"):
        if type_ == "DELETED":
            events.remove(ev)
        else:
            events.append(ev)
        events_store.apply(type_, row_of(event_kind, slim.slim(event_kind, ev)), "2")

    check({"rs1"})                                   # p1, p4; p3 ready; p5 has no owner
    event_event(_event("a", "w2", "p2"))             # p2 warned
    check({"rs1", "rs2"})
    pod_event(0, _owned(_pod("a", "p1", ready=True), "rs1"))
    check({"rs1", "rs2"})                            # p4 still
    event_event(events[2], "DELETED")                # p4's warning expires
    check({"rs2"})
    pod_event(2, _owned(_pod("a", "p3"), "rs3"))     # p3 not ready, warned
    check({"rs2", "rs3"})
    event_event(_event("a", "w2b", "p2"))            # a second warning, then the first goes
    event_event(events[-2], "DELETED")
    check({"rs2", "rs3"})
    pod_event(1, raw_pods[1], "DELETED")
    check({"rs3"})
    events_store.replace([row_of(event_kind, slim.slim(event_kind, ev))
                          for ev in events + [_event("b", "w4", "p4")]], "3")
    events.append(_event("b", "w4", "p4"))
    check({"rs1", "rs3"})                            # a full LIST of events: rebuilt
    raw_pods[1] = _owned(_pod("a", "p3", ready=True), "rs3")   # p1, p3, p4, p5
    pod_store.replace([row_of(pod_kind, slim.slim(pod_kind, p)) for p in raw_pods], "4")
    check({"rs1"})


def test_deployments_and_jobs_list_status_counted_per_event_as_from_their_pods():
    """Deployments' list status (through their replica sets) and jobs' (a running pod makes a
    job neither complete nor failed running) counted from the watch cache's counters, joins
    and indexes kept per event (issue #30), as the walk of every workload's pods counts it,
    through pod, event and replica-set changes."""
    deployments = [{"metadata": {"namespace": "a", "name": d, "uid": d,
                                 "creationTimestamp": "2024-01-01T00:00:00Z"}}
                   for d in ("d1", "d2", "d3", "d4")]
    sets = [_owned({"metadata": {"namespace": "a", "name": rs, "uid": rs}, "status": {}}, d)
            for rs, d in (("rs1", "d1"), ("rs1b", "d1"), ("rs2", "d2"), ("rs3", "d3"))]
    jobs = [{"metadata": {"namespace": "a", "name": j, "uid": j}, "status": {"conditions": c}}
            for j, c in (("j1", []), ("j2", []), ("j3", [{"type": "Complete", "status": "True"}]),
                         ("j4", [{"type": "Failed", "status": "True"}]))]

    def job_pod(name, job, phase):
        pod = _owned(_pod("a", name), job, phase)
        pod["metadata"]["ownerReferences"][0]["kind"] = "Job"
        return pod
    raw_pods = [_owned(_pod("a", "p1"), "rs1"), _owned(_pod("a", "p2"), "rs2", "Pending"),
                _owned(_pod("a", "p3"), "rs3"), job_pod("jp1", "j1", "Running"),
                job_pod("jp2", "j2", "Pending")]
    events = [_event("a", "w1", "p1")]
    event_kind, events_store = _events_store(events)
    pod_kind, pod_store = _store("pod", raw_pods)
    rs_kind, rs_store = _store("replicaset", sets)
    dep_kind, dep_store = _store("deployment", deployments)
    job_kind, job_store = _store("job", jobs)
    join_stores({"pod": pod_store, "event": events_store, "replicaset": rs_store,
                 "deployment": dep_store})

    def check(expected_deployments, expected_jobs):
        walked = Related(pods=list(raw_pods), events=list(events), replicasets=list(sets))
        cached = Related(pods=pod_store.related(()), events=events_store.related(()),
                         replicasets=rs_store.related(()))
        walk = workload_status._status_by(workloads.deployment_pods)
        # the cached reads are the joins' and index's views, not walks
        for found in (cached.warned_deployments(), cached.pending_deployments(),
                      cached.running_jobs()):
            assert type(found) is type({}.keys())
        assert walk(deployments, walked) == expected_deployments
        # the deployments failed and pending, counted per namespace per event (Counted), as
        # a walk of every deployment's pods counts them
        counted = cached.owners_counted("deployment", ("replicasets", "pods", "events"))
        assert counted is not None and counted.store is dep_store
        by_namespace = {}
        for obj in deployments:
            status = walk([obj], walked)
            if status["failed"] or status["pending"]:
                had = by_namespace.get(obj["metadata"]["namespace"], (0, 0))
                by_namespace[obj["metadata"]["namespace"]] = (
                    had[0] + status["failed"], had[1] + status["pending"])
        assert counted.counts == by_namespace
        for rel in (walked, cached):
            counts, groups = dep_store.status_tally(())
            assert dep_kind.status_counted(counts, groups, rel) == expected_deployments
            assert dep_kind.list_status(deployments, rel) == expected_deployments
            assert workload_status.job_list_status(jobs, rel) == expected_jobs
            counts, groups = job_store.status_tally(())
            assert job_kind.status_counted(counts, groups, rel) == expected_jobs

    def change(store, kind, objects, i, obj, type_="MODIFIED"):
        if type_ == "DELETED":
            objects.remove(obj)
        elif type_ == "ADDED":
            objects.append(obj)
        else:
            objects[i] = obj
        store.apply(type_, row_of(kind, slim.slim(kind, obj)), "2")

    jobs_now = dict(resource_status(), running=1, pending=1, succeeded=1, failed=1)
    # d1: rs1's p1 warned; d2: rs2's p2 pends; d3: rs3 runs; d4 has no replica set
    check(dict(resource_status(), failed=1, pending=1, running=2), jobs_now)
    change(events_store, event_kind, events, 0, events[0], "DELETED")     # p1's warning goes
    change(events_store, event_kind, events, 0, _event("a", "w3", "p3"), "ADDED")
    check(dict(resource_status(), failed=1, pending=1, running=2), jobs_now)   # d3 now
    change(rs_store, rs_kind, sets, 3, _owned(
        {"metadata": {"namespace": "a", "name": "rs3", "uid": "rs3"}, "status": {}}, "d4"))
    check(dict(resource_status(), failed=1, pending=1, running=2), jobs_now)   # d4 now
    change(pod_store, pod_kind, raw_pods, 1, _owned(_pod("a", "p2"), "rs2"))   # p2 runs
    change(pod_store, pod_kind, raw_pods, 0, _owned(_pod("a", "p1"), "rs1b", "Pending"))
    check(dict(resource_status(), failed=1, pending=1, running=2), jobs_now)   # d1 by rs1b
    change(rs_store, rs_kind, sets, 1, sets[1], "DELETED")
    change(pod_store, pod_kind, raw_pods, 4, job_pod("jp2", "j2", "Running"))
    change(pod_store, pod_kind, raw_pods, 3, raw_pods[3], "DELETED")
    check(dict(resource_status(), failed=1, running=3),
          dict(jobs_now, running=1, pending=1))                 # j1 lost its pod, j2 runs
    sets.append(_owned({"metadata": {"namespace": "a", "name": "rs1b", "uid": "rs1b"},
                        "status": {}}, "d2"))
    rs_store.replace([row_of(rs_kind, slim.slim(rs_kind, rs)) for rs in sets], "3")
    check(dict(resource_status(), failed=1, pending=1, running=2),
          dict(jobs_now, running=1, pending=1))                 # a full LIST: rs1b is d2's


def test_owned_workloads_counted_by_namespace_per_event_as_a_full_walk_counts_them():
    """The watch cache's count by namespace of the replica sets (and daemon sets) failed and
    pending in their list status (cache/joined.py Counted, issue #30) is what a walk of every
    workload's pods and events finds, and the page's status from it what the walk answers,
    through replica-set, pod and event adds, updates and deletes and full LISTs of each."""
    def rs(ns, name):
        return {"metadata": {"namespace": ns, "name": name, "uid": name,
                             "creationTimestamp": "2024-01-01T00:00:00Z"}, "spec": {}}
    sets = [rs("a", "rs1"), rs("a", "rs2"), rs("a", "rs3"), rs("b", "rs4"), rs("b", "rs5")]
    daemons = [rs("a", "ds1")]
    raw_pods = [_owned(_pod("a", "p1"), "rs1"), _owned(_pod("a", "p2"), "rs2", "Pending"),
                _owned(_pod("a", "p3", ready=True), "rs3"), _owned(_pod("b", "p4"), "rs4"),
                _owned(_pod("b", "p5"), "rs5", "Pending"), _owned(_pod("a", "d1"), "ds1"),
                _owned(_pod("b", "p6"), "gone", "Pending")]
    events = [_event("a", "w1", "p1"), _event("a", "w3", "p3"), _event("b", "w5", "p5"),
              _event("a", "wd", "d1"), _event("b", "w6", "p6")]
    event_kind, events_store = _events_store(events)
    pod_kind, pod_store = _store("pod", raw_pods)
    rs_kind, rs_store = _store("replicaset", sets)
    ds_kind, ds_store = _store("daemonset", daemons)
    join_stores({"pod": pod_store, "event": events_store, "replicaset": rs_store,
                 "daemonset": ds_store})
    walk = workload_status._status_by(workloads.owned_pods)

    def check(expected):
        walked = Related(pods=list(raw_pods), events=list(events))
        cached = Related(pods=pod_store.related(()), events=events_store.related(()))
        for kind, store, objects in ((rs_kind, rs_store, sets), (ds_kind, ds_store, daemons)):
            counted = cached.owners_counted(kind.name)
            assert counted is not None and counted.store is store
            by_namespace = {}
            for obj in objects:
                ns = obj["metadata"]["namespace"]
                status = walk([obj], walked)
                found = (status["failed"], status["pending"])
                if found != (0, 0):
                    had = by_namespace.get(ns, (0, 0))
                    by_namespace[ns] = (had[0] + found[0], had[1] + found[1])
            assert counted.counts == by_namespace
            for scope in ((), ("a",), ("b",)):
                in_scope = [o for o in objects if not scope or o["metadata"]["namespace"] in scope]
                counts, groups = store.status_tally(scope)
                assert kind.status_counted(counts, groups, cached) == walk(in_scope, walked)
                assert kind.status_counted(counts, groups, walked) == walk(in_scope, walked)
        assert walk(sets, walked) == expected

    def change(store, kind, objects, obj, type_="MODIFIED"):
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        found = [i for i, o in enumerate(objects)
                 if (o["metadata"]["namespace"], o["metadata"]["name"]) == key]
        if type_ == "DELETED":
            del objects[found[0]]
        elif found:
            objects[found[0]] = obj
        else:
            objects.append(obj)
        store.apply(type_, row_of(kind, slim.slim(kind, obj)), "2")

    def relist(store, kind, objects):
        store.replace([row_of(kind, slim.slim(kind, obj)) for obj in objects], "3")

    # rs1: p1 not ready, warned; rs2, rs5 pend (rs5's warned pod p5 is not ready: failed);
    # rs3's warned pod is ready; rs4's pod has no warning; p6's owner is no replica set
    check(dict(resource_status(), failed=2, pending=1, running=2))
    change(events_store, event_kind, events, _event("b", "w4", "p4"), "ADDED")
    check(dict(resource_status(), failed=3, pending=1, running=1))
    change(pod_store, pod_kind, raw_pods, _owned(_pod("a", "p2"), "rs2"))          # runs
    change(pod_store, pod_kind, raw_pods, _owned(_pod("a", "p3"), "rs3", "Pending"))
    check(dict(resource_status(), failed=4, running=1))                # p3 not ready: failed
    change(events_store, event_kind, events, events[1], "DELETED")     # p3's warning goes
    check(dict(resource_status(), failed=3, pending=1, running=1))
    change(pod_store, pod_kind, raw_pods, _owned(_pod("a", "p7"), "rs2", "Pending"), "ADDED")
    change(pod_store, pod_kind, raw_pods, _owned(_pod("a", "p8"), "rs3"), "ADDED")
    change(events_store, event_kind, events, _event("a", "w8", "p8"), "ADDED")
    check(dict(resource_status(), failed=4, pending=1))                # rs3 pends and fails
    change(rs_store, rs_kind, sets, sets[0], "DELETED")                # rs1 goes, its pod stays
    change(rs_store, rs_kind, sets, rs("b", "gone"), "ADDED")          # p6's owner comes
    change(rs_store, rs_kind, sets, dict(rs("b", "rs4"), spec={"replicas": 2}))
    check(dict(resource_status(), failed=4, pending=1))
    change(pod_store, pod_kind, raw_pods, raw_pods[0], "DELETED")
    change(pod_store, pod_kind, raw_pods, _owned(_pod("a", "d1", ready=True), "ds1"))
    check(dict(resource_status(), failed=4, pending=1))
    events.append(_event("a", "w1", "p1"))
    events[:] = [ev for ev in events if ev["metadata"]["name"] != "w5"]
    relist(events_store, event_kind, events)                           # p5 pends, unwarned
    check(dict(resource_status(), failed=3, pending=2))
    sets[:] = [s for s in sets if s["metadata"]["name"] != "rs2"] + [rs("a", "rs1")]
    relist(rs_store, rs_kind, sets)                                    # rs1 back, rs2 gone
    raw_pods.append(_owned(_pod("a", "p1"), "rs1"))
    raw_pods[:] = [p for p in raw_pods if p["metadata"]["name"] != "p4"]
    relist(pod_store, pod_kind, raw_pods)                              # rs4 runs, rs1 fails
    check(dict(resource_status(), failed=3, pending=1, running=1))
