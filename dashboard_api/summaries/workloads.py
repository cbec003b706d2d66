"""Deployments, replica sets, replication controllers, daemon sets, stateful sets and jobs
(reference §5.2): list items with PodInfo, details, list status, and their sublists."""

import hashlib

import msgspec

from dashboard_api.reads import Need, Sublist, scope_of
from dashboard_api.summaries import autoscaling
from dashboard_api.summaries.common import (conditions, container_images, name, object_meta,
                                            resource_status, type_meta, uid)
from dashboard_api.summaries.events import warnings
from dashboard_api.summaries.selectors import is_subset, to_query


def pod_info(current, desired, pods, rel):
    """PodInfo: counts of ``pods`` by raw phase and their warnings."""
    phases = {"Running": 0, "Pending": 0, "Failed": 0, "Succeeded": 0}
    for pod in pods:
        phase = (pod.get("status") or {}).get("phase")
        if phase in phases:
            phases[phase] += 1
    info = {"current": current or 0}
    if desired is not None:
        info["desired"] = desired
    info.update(running=phases["Running"], pending=phases["Pending"], failed=phases["Failed"],
                succeeded=phases["Succeeded"], warnings=warnings(pods, rel))
    return info


def _item(kind, obj, info_key, info):
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec")
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta(kind), info_key: info,
            "containerImages": container_images(template),
            "initContainerImages": container_images(template, "initContainers")}


def owned_pods(obj, rel):
    """Pods whose controller is ``obj``."""
    return rel.by_controller("pods").get(uid(obj), [])


def deployment_pods(obj, rel):
    sets = rel.by_controller("replicasets").get(uid(obj), [])
    by_owner = rel.by_controller("pods")
    return [pod for rs in sets for pod in by_owner.get(uid(rs), ())]


def _replicas(obj):
    return (obj.get("status") or {}).get("replicas"), (obj.get("spec") or {}).get("replicas")


def deployment(obj, rel):
    current, desired = _replicas(obj)
    return _item("deployment", obj, "pods", pod_info(current, desired,
                                                     deployment_pods(obj, rel), rel))


def replicaset(obj, rel):
    current, desired = _replicas(obj)
    return _item("replicaset", obj, "podInfo", pod_info(current, desired,
                                                        owned_pods(obj, rel), rel))


def replicationcontroller(obj, rel):
    current, desired = _replicas(obj)
    return _item("replicationcontroller", obj, "podInfo",
                 pod_info(current, desired, owned_pods(obj, rel), rel))


def daemonset(obj, rel):
    status = obj.get("status") or {}
    return _item("daemonset", obj, "podInfo",
                 pod_info(status.get("currentNumberScheduled"),
                          status.get("desiredNumberScheduled", 0), owned_pods(obj, rel), rel))


def statefulset(obj, rel):
    current, desired = _replicas(obj)
    return _item("statefulset", obj, "podInfo", pod_info(current, desired,
                                                         owned_pods(obj, rel), rel))


def job_status(obj):
    conds = (obj.get("status") or {}).get("conditions") or []
    for c in conds:
        if c.get("status") == "True" and c.get("type") in ("Complete", "Failed"):
            return {"status": c["type"],
                    "message": c.get("message", "") if c["type"] == "Failed" else "",
                    "conditions": conditions(conds)}
    return {"status": "Running", "message": "", "conditions": conditions(conds) or None}


def job(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    item = _item("job", obj, "podInfo", pod_info(status.get("active"), spec.get("completions"),
                                                 owned_pods(obj, rel), rel))
    item["parallelism"] = spec.get("parallelism")
    item["jobStatus"] = job_status(obj)
    return item


def _status_by(pods_of):
    """The list status of workloads whose pods ``pods_of(obj, rel)`` gives: per workload,
    failed when its pods have warnings, else pending when one pends, else running (the rule
    the counted forms below follow; tests compare them with it)."""
    def list_status(raw, rel):
        out = resource_status()
        for obj in raw:
            pods = pods_of(obj, rel)
            if warnings(pods, rel):
                out["failed"] += 1
            elif any((p.get("status") or {}).get("phase") == "Pending" for p in pods):
                out["pending"] += 1
            else:
                out["running"] += 1
        return out
    return list_status


# The list status of workloads from the sets of workloads with a warned not-ready pod and with
# a pending pod (Related: off the pod store's indexes and the watch cache's joins, kept per
# event), so a page under pod churn costs set intersections, not a walk of every workload's
# pods (issue #30): the same rule as _status_by. The watch cache keeps each workload's UID as
# its facts, all in one group.

def status_facts(obj):
    return uid(obj)


def status_split(facts):
    """No bucket from the workload alone: its UID, kept for status_counted (a workload
    without one, never cached, is running: it owns no pods)."""
    return (None, facts) if facts else ("running", None)


def _counted_by(failing_of, pending_of, counted_of=lambda rel: None):
    """(list_status, status_counted) of workloads, ``failing_of(rel)`` and ``pending_of(rel)``
    the sets of those with a warned not-ready pod and with a pending pod; ``counted_of(rel)``
    the watch cache's count of both by namespace (cache/joined.py Counted), or None."""
    def list_status(raw, rel, facts=None):
        failing, pending = failing_of(rel), pending_of(rel)
        out = resource_status()
        for owner in facts if facts is not None else map(uid, raw):
            out["failed" if owner in failing else "pending" if owner in pending
                else "running"] += 1
        return out

    def status_counted(counts, groups, rel):
        """list_status from the watch cache's counters: ``groups`` {namespace: {None: {uid:
        uid}}} of the workloads (all those of the cached store, by namespace), counted per
        namespace by ``counted_of(rel)`` when the cache keeps that count, else met with the
        sets by C-level set intersections."""
        counted = counted_of(rel)
        if counted is None:
            failing, pending = failing_of(rel), pending_of(rel)
        out = resource_status()
        for bucket, n in counts.items():
            out[bucket] += n
        for namespace, part in groups.items():
            for group in part.values():
                uids = group.keys()
                if counted is not None:
                    failed, pends = counted.count(namespace)
                else:
                    failed = len(uids & failing)
                    pends = len((uids & pending) - failing)
                out["failed"] += failed
                out["pending"] += pends
                out["running"] += len(uids) - failed - pends
        return out
    return list_status, status_counted


# Replica sets, replication controllers, daemon sets, stateful sets: the controllers of the
# pods (``owned_status_counted(kind)``, counted per namespace for the kind's store);
# deployments: the owners of those replica sets.
def _warned_controllers(rel):
    return rel.warned_controllers()


def _pending_controllers(rel):
    return rel.pending_controllers()


list_status = _counted_by(_warned_controllers, _pending_controllers)[0]


def owned_status_counted(kind):
    """status_counted of the workloads of ``kind`` owning their pods, from the watch cache's
    count by namespace kept for that kind (spec.joins.COUNTED) when the page's pods and events
    are cached, else by set intersections."""
    return _counted_by(_warned_controllers, _pending_controllers,
                       lambda rel: rel.owners_counted(kind))[1]


# Deployments: counted per namespace over the replica sets they own (spec.joins.COUNTED).
deployment_list_status, deployment_status_counted = _counted_by(
    lambda rel: rel.warned_deployments(), lambda rel: rel.pending_deployments(),
    lambda rel: rel.owners_counted("deployment", ("replicasets", "pods", "events")))


# Jobs: failed or complete by their conditions, else running when one of their pods runs (the
# pods' "running_job" index, kept per event), else pending; facts (state, UID).
_JOB_DONE = {"Failed": "failed", "Complete": "succeeded"}


def _job_state(obj):
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("status") == "True" and c.get("type") in _JOB_DONE:
            return c["type"]
    return "Running"


def job_status_facts(obj):
    return _job_state(obj), uid(obj)


def job_status_split(facts):
    """Failed or complete from the job alone; else its UID, kept for job_status_counted (a
    job without one owns no pods: pending)."""
    state, owner = facts
    if state in _JOB_DONE:
        return _JOB_DONE[state], None
    return (None, owner) if owner else ("pending", None)


def job_list_status(raw, rel, facts=None):
    running = rel.running_jobs()
    out = resource_status()
    for state, owner in facts if facts is not None else map(job_status_facts, raw):
        out[_JOB_DONE.get(state) or ("running" if owner in running else "pending")] += 1
    return out


def job_status_counted(counts, groups, rel):
    """job_list_status from the watch cache's counters (``groups`` {namespace: {None: {uid:
    facts}}} of the jobs neither failed nor complete), by one set intersection per namespace."""
    running = rel.running_jobs()
    out = resource_status()
    for bucket, n in counts.items():
        out[bucket] += n
    for part in groups.values():
        for group in part.values():
            uids = group.keys()
            found = len(uids & running)
            out["running"] += found
            out["pending"] += len(uids) - found
    return out


# --- details ---------------------------------------------------------------------------------

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


def _template_without_hash(template):
    meta = dict((template or {}).get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    labels.pop("pod-template-hash", None)
    meta["labels"] = labels
    return dict(template or {}, metadata=meta)


def template_digest(template):
    """A fingerprint of a pod template but its ``pod-template-hash`` label: equal for equal
    templates (keys sorted). The watch cache keeps it in a replica set's record
    (``spec.templateDigest``, kinds.REPLICA_SET) instead of the template itself."""
    encoded = msgspec.json.encode(_template_without_hash(template), order="sorted")
    return hashlib.blake2b(encoded, digest_size=16).hexdigest()


def _digest_of(rs):
    spec = rs.get("spec") or {}
    return spec.get("templateDigest") or template_digest(spec.get("template"))


def new_replica_set(deployment_obj, sets):
    """The replica set running the deployment's current template (the oldest if several):
    the one whose template is the deployment's but for its ``pod-template-hash`` label,
    compared by fingerprint (``template_digest``)."""
    digest = template_digest((deployment_obj.get("spec") or {}).get("template"))
    matches = [rs for rs in sets if _digest_of(rs) == digest]
    matches.sort(key=lambda rs: (rs.get("metadata") or {}).get("creationTimestamp") or "")
    return matches[0] if matches else None


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


def owner_info(kind, owner, rel):
    """ResourceOwner of a pod detail: the controller's list item with its PodInfo under
    ``pods`` (a pod names its controller's pods so, whatever the controller's kind)."""
    item = SUMMARIES[kind](owner, rel)
    info = item.pop("podInfo", None) or item.pop("pods")
    keep = ("objectMeta", "typeMeta", "containerImages", "initContainerImages")
    out = {k: item[k] for k in keep}
    out["pods"] = info
    return out


SUMMARIES = {"replicaset": replicaset, "replicationcontroller": replicationcontroller,
             "daemonset": daemonset, "statefulset": statefulset, "job": job}

