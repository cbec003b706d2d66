"""Pure pod summaries: status string (reference §6), resources, warnings, env field values."""

from fractions import Fraction

import pytest

from dashboard_api.summaries import events, labelselector as selectors, pods, quantity
from dashboard_api.summaries.podstatus import list_phase, pod_status, restart_count
from dashboard_api.summaries.related import Related


def pod(phase="Running", conditions=(), statuses=(), init_statuses=(), init_spec=(),
        deleted=False, reason=None):
    status = {"phase": phase, "conditions": [{"type": t, "status": s} for t, s in conditions],
              "containerStatuses": list(statuses), "initContainerStatuses": list(init_statuses)}
    if reason:
        status["reason"] = reason
    meta = {"name": "p", "uid": "u"}
    if deleted:
        meta["deletionTimestamp"] = "2024-05-01T10:00:00Z"
    return {"metadata": meta, "spec": {"initContainers": list(init_spec)}, "status": status}


def waiting(reason):
    return {"name": "c", "state": {"waiting": {"reason": reason}}}


def terminated(code=0, reason=None, signal=None):
    state = {"exitCode": code}
    if reason:
        state["reason"] = reason
    if signal:
        state["signal"] = signal
    return {"name": "c", "state": {"terminated": state}}


def running(ready=True):
    return {"name": "c", "ready": ready, "state": {"running": {}}}


@pytest.mark.parametrize("obj,expected", [
    (pod(conditions=[("Initialized", "True"), ("Ready", "True")]), "Running"),
    (pod("Pending", conditions=[("Initialized", "False")]), "Pending"),
    (pod(statuses=[terminated(reason="Terminated"), waiting("Waiting")]), "Terminated"),
    ({}, ""),
    (pod(reason="Evicted", phase="Failed"), "Evicted"),
    (pod("Pending", conditions=[("PodScheduled", "False")]), "Pending"),
    (pod(statuses=[waiting("CrashLoopBackOff")]), "CrashLoopBackOff"),
    (pod(statuses=[terminated(code=2)]), "ExitCode: 2"),
    (pod(statuses=[terminated(code=2, signal=9)]), "Signal: 9"),
    (pod(statuses=[running(), terminated(reason="Completed")],
         conditions=[("Ready", "True")]), "Running"),
    (pod(statuses=[running(), terminated(reason="Completed")]), "NotReady"),
    (pod("Pending", init_statuses=[terminated(code=1)], init_spec=[{}]), "Init: ExitCode 1"),
    (pod("Pending", init_statuses=[terminated(code=1, reason="Error")], init_spec=[{}]),
     "Init:Error"),
    (pod("Pending", init_statuses=[terminated(code=1, signal=15)], init_spec=[{}]),
     "Init: Signal 15"),
    (pod("Pending", init_statuses=[waiting("ImagePullBackOff")], init_spec=[{}]),
     "Init: ImagePullBackOff"),
    (pod("Pending", init_statuses=[terminated(), waiting("PodInitializing")],
         init_spec=[{}, {}]), "Init: 1/2"),
    # A started sidecar (restartPolicy Always) counts as done.
    (pod("Running", init_statuses=[dict(running(), started=True)],
         init_spec=[{"restartPolicy": "Always"}], statuses=[waiting("ContainerCreating")]),
     "ContainerCreating"),
    (pod(deleted=True), "Terminating"),
    (pod("Succeeded", deleted=True), "Succeeded"),
    (pod(deleted=True, reason="NodeLost"), "Unknown"),
])
def test_pod_status(obj, expected):
    assert pod_status(obj) == expected


def test_scheduling_gated():
    obj = pod("Pending")
    obj["status"]["conditions"] = [{"type": "PodScheduled", "status": "False",
                                    "reason": "SchedulingGated"}]
    assert pod_status(obj) == "SchedulingGated"


def test_restart_count_ignores_init_containers():
    obj = pod(statuses=[dict(running(), restartCount=2), dict(running(), restartCount=3)],
              init_statuses=[dict(terminated(), restartCount=7)])
    assert restart_count(obj) == 5


@pytest.mark.parametrize("obj,warned,expected", [
    (pod("Failed"), False, "failed"),
    (pod("Succeeded"), True, "succeeded"),
    (pod(conditions=[("Initialized", "True"), ("Ready", "True")]), True, "running"),
    (pod(conditions=[("Ready", "False")]), True, "failed"),
    (pod(deleted=True), False, "terminating"),
    (pod("Pending"), False, "pending"),   # upstream never counted these
    (pod("Unknown"), False, None),
])
def test_list_phase(obj, warned, expected):
    assert list_phase(obj, warned) == expected


@pytest.mark.parametrize("status,expected", [
    (waiting("X"), "Waiting"), (terminated(0), "Terminated"), (terminated(3), "Failed"),
    (running(), "Running"), ({"state": {}}, "Unknown"), (None, "Unknown"),
])
def test_container_state(status, expected):
    assert pods.container_state(status) == expected


@pytest.mark.parametrize("text,value", [
    ("250m", Fraction(1, 4)), ("2", 2), ("1.5", Fraction(3, 2)), ("128Mi", 128 * 2 ** 20),
    ("1Gi", 2 ** 30), ("1k", 1000), ("2e3", 2000), ("100n", Fraction(1, 10 ** 7)),
    ("", 0), ("junk", 0), (None, 0), (3, 3),
])
def test_quantity_parse(text, value):
    assert quantity.parse(text) == value


def test_effective_resources_with_init_containers_overhead_and_gpus():
    spec = {
        "containers": [
            {"resources": {"requests": {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"},
                           "limits": {"cpu": "200m", "nvidia.com/gpu": "1"}}},
            {"resources": {"requests": {"cpu": "150m", "amd.com/gpu": "2"}}},
        ],
        "initContainers": [{"resources": {"requests": {"cpu": "1", "memory": "16Mi"},
                                          "limits": {"memory": "1Gi",
                                                     "gpu.intel.com/i915": "1"}}}],
        "overhead": {"cpu": "10m", "memory": "1Mi"},
    }
    out = pods.allocated_resources(spec)
    assert out["cpuRequests"] == 1010          # init container's 1 CPU beats 250m, + overhead
    assert out["memoryRequests"] == 65 * 2 ** 20
    assert out["cpuLimits"] == 210             # overhead added to a limit that is set
    assert out["memoryLimits"] == 2 ** 30 + 2 ** 20  # init container raises it, + overhead
    assert sorted(map(tuple, (sorted(g.items()) for g in out["gpuRequests"]))) == [
        (("quantity", "1"), ("type", "nvidia")), (("quantity", "2"), ("type", "amd"))]
    assert sorted(g["type"] for g in out["gpuLimits"]) == ["intel", "nvidia"]
    # Overhead goes to requests always, to limits only where a limit is set.
    bare = pods.allocated_resources({"containers": [{}], "overhead": {"memory": "1Mi"}})
    assert (bare["memoryRequests"], bare["memoryLimits"]) == (2 ** 20, 0)
    # made once for the parts a template's pods share, handed out as a copy each time
    again = pods.allocated_resources(dict(spec))
    assert again == out and again is not out
    changed = dict(spec, containers=[{"resources": {"requests": {"cpu": "1"}}}])
    assert pods.allocated_resources(changed)["cpuRequests"] == 1010   # the init container's 1 CPU
    assert pods.allocated_resources(dict(changed, initContainers=None, overhead=None)) \
        ["cpuRequests"] == 1000


@pytest.mark.parametrize("name,kind", [("nvidia.com/gpu", "nvidia"), ("amd.com/gpu", "amd"),
                                       ("gpu.intel.com/xe", "intel"),
                                       ("unknown.gpu.type", "unknown"), ("cpu", None),
                                       ("", None)])
def test_gpu_types(name, kind):
    assert quantity.gpu_type(name) == kind


@pytest.mark.parametrize("reason,expected", [
    ("FailedMount", "Warning"), ("BackOff", "Warning"), ("NodeOutOfDisk", "Warning"),
    ("Started", "Normal"), ("", "Normal"), ("ErrImagePull", "Warning")])
def test_event_type_derived_from_reason(reason, expected):
    assert events.event_type({"reason": reason}) == expected
    assert events.event_type({"reason": reason, "type": "Custom"}) == "Custom"


def test_warnings_only_for_not_ready_pods_one_per_reason():
    ready = pod(conditions=[("Ready", "True")])
    ready["metadata"]["uid"] = "ready"
    failing = pod("Pending")
    failing["metadata"]["uid"] = "failing"
    not_ready = pod("Running", conditions=[("Ready", "False")])
    not_ready["metadata"]["uid"] = "not-ready"

    def ev(uid, reason, type_="Warning", message="m"):
        return {"involvedObject": {"uid": uid}, "reason": reason, "type": type_,
                "message": message}
    rel = Related(events=[ev("ready", "FailedX"), ev("failing", "FailedMount", message="one"),
                          ev("failing", "FailedMount", message="two"),
                          ev("failing", "Scheduled", "Normal"),
                          ev("not-ready", "Unhealthy", "")])
    out = events.warnings([ready, failing, not_ready], rel)
    assert [(w["reason"], w["message"]) for w in out] == [("FailedMount", "one"),
                                                         ("Unhealthy", "m")]
    assert out[0]["firstSeen"] is None and out[0]["typeMeta"] == {}


def test_status_facts_carry_a_uid_only_where_a_warning_would_move_the_pod():
    """A pod that a Warning event would move (not ready, its bucket differs) keeps its UID in
    its facts; the others share one facts tuple per bucket, and the list status from facts is
    the one from the pods."""
    def with_uid(obj, uid):
        obj["metadata"]["uid"] = uid
        return obj
    ready = [with_uid(pod("Running", conditions=[("Initialized", "True"), ("Ready", "True")]),
                      "ready-%d" % i) for i in range(2)]
    pending = with_uid(pod("Pending"), "pending")
    facts = [pods.status_facts(p) for p in ready + [pending]]
    assert facts[0] is facts[1] and facts[0][3] is None
    assert facts[2] == ("pending", "failed", False, "pending")
    rel = Related(events=[{"involvedObject": {"uid": uid}, "reason": "FailedX",
                           "type": "Warning", "message": "m"} for uid in ("ready-0", "pending")])
    assert pods.list_status(None, rel, facts=facts) == pods.list_status(ready + [pending], rel)
    assert pods.list_status(None, rel, facts=facts)["failed"] == 1


def test_event_item_falls_back_to_event_time():
    item = events.event({"metadata": {"name": "e"}, "eventTime": "2024-05-01T10:00:00.5Z",
                         "involvedObject": {"kind": "Pod", "name": "p", "fieldPath": "spec"},
                         "reason": "Started"})
    assert item["firstSeen"] == item["lastSeen"] == "2024-05-01T10:00:00.5Z"
    assert (item["object"], item["objectKind"], item["objectName"]) == ("spec", "Pod", "p")
    assert "objectNamespace" not in item and item["type"] == "Normal"


def test_env_field_values():
    obj = {"metadata": {"name": "p", "namespace": "n", "labels": {"b": "2", "a": "1"},
                        "annotations": {"x": "y"}},
           "spec": {"nodeName": "node"}, "status": {"podIPs": [{"ip": "1.2.3.4"},
                                                              {"ip": "::1"}]}}
    assert pods._field_value(obj, "metadata.labels") == 'a="1"\nb="2"'
    assert pods._field_value(obj, "metadata.annotations['x']") == "y"
    assert pods._field_value(obj, "metadata.namespace") == "n"
    assert pods._field_value(obj, "status.podIPs") == "1.2.3.4,::1"
    assert pods._field_value(obj, "spec.nosuch") == ""


def test_resource_field_values():
    c = {"name": "c", "resources": {"requests": {"cpu": "250m", "memory": "100Mi"},
                                    "limits": {"memory": "0"}}}
    obj = {"spec": {"containers": [c]}}
    assert pods._resource_value(obj, c, {"resource": "requests.cpu"}) == "1"
    assert pods._resource_value(obj, c, {"resource": "requests.cpu", "divisor": "1m"}) == "250"
    assert pods._resource_value(obj, c, {"resource": "requests.memory",
                                         "divisor": "1Mi"}) == "100"
    assert pods._resource_value(obj, c, {"resource": "limits.cpu"}) == "node allocatable"


@pytest.mark.parametrize("selector,query", [
    ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
    ({"app": "x"}, "app=x"),
    ({"matchExpressions": [{"key": "k", "operator": "In", "values": ["a", "b"]},
                           {"key": "n", "operator": "NotIn", "values": ["c"]},
                           {"key": "e", "operator": "Exists"},
                           {"key": "d", "operator": "DoesNotExist"}]},
     "k in (a,b),n notin (c),e,!d"),
    ({}, ""), (None, ""),
])
def test_selector_query(selector, query):
    assert selectors.to_query(selector) == query


def test_selector_subset():
    assert selectors.is_subset({"a": "1"}, {"a": "1", "b": "2"})
    assert not selectors.is_subset({}, {"a": "1"})
    assert not selectors.is_subset({"a": "2"}, {"a": "1"})


def test_related_indexes_follow_later_reads():
    from dashboard_api.summaries.related import Related
    rel = Related()
    assert rel.by_controller("jobs") == {}
    rel["jobs"] = [{"metadata": {"name": "j", "ownerReferences": [
        {"uid": "cron-1", "controller": True}]}}]
    assert [j["metadata"]["name"] for j in rel.by_controller("jobs")["cron-1"]] == ["j"]
