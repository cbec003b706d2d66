"""The details of workloads and their related routes (reference §5.2): what a detail reads
beside the object, the detail's fields, and the pods, services and replica sets sublists."""

from dashboard_api.query.reads import Need, Sublist, scope_of
from dashboard_api.summaries import autoscaling
from dashboard_api.summaries.common import conditions, name, uid
from dashboard_api.summaries.labelselector import is_subset, to_query
from dashboard_api.summaries.workloads.items import (daemonset, deployment, job, new_replica_set,
                                                     owned_pods, replicaset, replicationcontroller,
                                                     statefulset)


def _selector(obj):
    return (obj.get("spec") or {}).get("selector") or {}


def owned_pods_needs(obj, rel):
    """Pods selected by the workload (matched to it by controller afterwards), their events."""
    scope = scope_of(obj)
    return [Need("pods", namespaces=scope, labels=to_query(_selector(obj))),
            Need("events", namespaces=scope)]


def replicaset_detail_needs(obj, rel):
    """Also the autoscalers that target the replica set (upstream never found them)."""
    return owned_pods_needs(obj, rel) + [
        Need("autoscalers", "horizontalpodautoscaler", scope_of(obj))]


def deployment_detail_needs(obj, rel):
    scope, labels = scope_of(obj), to_query(_selector(obj))
    return [Need("pods", namespaces=scope, labels=labels),
            Need("replicasets", namespaces=scope, labels=labels),
            Need("events", namespaces=scope)]


def job_pods_needs(obj, rel):
    scope = scope_of(obj)
    return [Need("pods", namespaces=scope,
                 labels=to_query((_selector(obj).get("matchLabels") or {}))),
            Need("events", namespaces=scope)]


def deployment_detail(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    out = deployment(obj, rel)
    strategy = spec.get("strategy") or {}
    out.update(
        selector=_selector(obj).get("matchLabels") or {},
        statusInfo={"replicas": status.get("replicas", 0),
                    "updated": status.get("updatedReplicas", 0),
                    "available": status.get("availableReplicas", 0),
                    "unavailable": status.get("unavailableReplicas", 0)},
        conditions=conditions(status.get("conditions"), "lastUpdateTime"),
        strategy=strategy.get("type", ""),
        minReadySeconds=spec.get("minReadySeconds", 0),
        revisionHistoryLimit=spec.get("revisionHistoryLimit"),
        errors=[])
    if strategy.get("type") == "RollingUpdate":
        rolling = strategy.get("rollingUpdate") or {}
        out["rollingUpdateStrategy"] = {"maxSurge": rolling.get("maxSurge"),
                                        "maxUnavailable": rolling.get("maxUnavailable")}
    return out


def replicaset_detail(obj, rel):
    out = replicaset(obj, rel)
    targets = [hpa for hpa in rel["autoscalers"] or () if autoscaling.targets(hpa, "replicaset",
                                                                              name(obj))]
    out.update(selector=_selector(obj), errors=[],
               horizontalPodAutoscalerList={
                   "listMeta": {"totalItems": len(targets)},
                   "horizontalpodautoscalers": [autoscaling.item(h, rel) for h in targets],
                   "errors": []})
    return out


def replicationcontroller_detail(obj, rel):
    out = replicationcontroller(obj, rel)
    out.update(labelSelector=_selector(obj), errors=[])
    return out


def daemonset_detail(obj, rel):
    out = daemonset(obj, rel)
    if _selector(obj):
        out["labelSelector"] = _selector(obj)
    out["errors"] = []
    return out


def statefulset_detail(obj, rel):
    out = statefulset(obj, rel)
    out["errors"] = []
    return out


def job_detail(obj, rel):
    status = obj.get("status") or {}
    out = job(obj, rel)
    out["podInfo"].update(running=status.get("active", 0), succeeded=status.get("succeeded", 0),
                          failed=status.get("failed", 0))
    out.update(completions=(obj.get("spec") or {}).get("completions"), errors=[])
    return out


# --- sublists --------------------------------------------------------------------------------

def _pods_need(labels):
    return lambda obj: [Need("pods", namespaces=scope_of(obj), labels=labels(obj),
                             critical=True)]


OWNED_PODS = Sublist("pod", "pod", _pods_need(lambda obj: to_query(_selector(obj))),
                     pick=lambda obj, rel, arg: owned_pods(obj, rel))

# Job pods are those matching the job's matchLabels (no owner check, as upstream).
JOB_PODS = Sublist("pod", "pod", _pods_need(
    lambda obj: to_query(_selector(obj).get("matchLabels") or {})))


def _workload_labels(obj):
    selector = _selector(obj)
    if "matchLabels" in selector or "matchExpressions" in selector:
        return selector.get("matchLabels") or {}
    return selector


SERVICES = Sublist(
    "service", "service",
    lambda obj: [Need("services", namespaces=scope_of(obj), critical=True)],
    pick=lambda obj, rel, arg: [
        s for s in rel["services"]
        if is_subset((s.get("spec") or {}).get("selector") or {}, _workload_labels(obj))])


def _controlled_sets(obj, rel):
    return rel.by_controller("replicasets").get(uid(obj), [])


def _old_sets(obj, rel, arg):
    sets = _controlled_sets(obj, rel)
    new = new_replica_set(obj, sets)
    return [rs for rs in sets if rs is not new and (rs.get("spec") or {}).get("replicas")]


def _sets_needs(obj):
    scope, labels = scope_of(obj), to_query(_selector(obj))
    return [Need("replicasets", namespaces=scope, labels=labels, critical=True)]


OLD_REPLICA_SETS = Sublist("oldreplicaset", "replicaset", _sets_needs, pick=_old_sets)

_ZERO_REPLICA_SET = {"objectMeta": {"creationTimestamp": None}, "typeMeta": {},
                     "podInfo": {"current": 0, "running": 0, "pending": 0, "failed": 0,
                                 "succeeded": 0, "warnings": []},
                     "containerImages": None, "initContainerImages": None}


def _new_set_response(obj, rel, arg):
    new = new_replica_set(obj, _controlled_sets(obj, rel))
    return replicaset(new, rel) if new else dict(_ZERO_REPLICA_SET)


NEW_REPLICA_SET = Sublist(
    "newreplicaset", "replicaset",
    lambda obj: _sets_needs(obj) + [
        Need("pods", namespaces=scope_of(obj), labels=to_query(_selector(obj))),
        Need("events", namespaces=scope_of(obj))],
    respond=_new_set_response)


