"""The list items of deployments, replica sets, replication controllers, daemon sets, stateful
sets and jobs (reference §5.2), with their PodInfo; the pods of a workload; which replica set
runs a deployment's current template."""

import hashlib

import msgspec

from dashboard_api.summaries.common import (conditions, container_images, object_meta,
                                            spec_images, type_meta, uid)
from dashboard_api.summaries.events import warnings


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


def template_images(obj):
    """The images of a workload's pod template (a search's ``image:``)."""
    return spec_images(((obj.get("spec") or {}).get("template") or {}).get("spec"))


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

