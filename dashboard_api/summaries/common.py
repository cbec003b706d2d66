"""Wire building blocks shared by every kind (reference §3): ObjectMeta, TypeMeta, Condition,
ResourceStatus, and the small readers of raw objects every summary uses."""

SCALABLE = frozenset(("deployment", "replicaset", "replicationcontroller", "statefulset"))
RESTARTABLE = frozenset(("deployment", "daemonset", "statefulset"))


def object_meta(obj):
    """ObjectMeta: empty fields omitted, creationTimestamp always present (null when unset)."""
    meta = obj.get("metadata") or {}
    out = {}
    for field in ("name", "namespace", "labels", "annotations"):
        if meta.get(field):
            out[field] = meta[field]
    out["creationTimestamp"] = meta.get("creationTimestamp")
    if meta.get("uid"):
        out["uid"] = meta["uid"]
    owners = meta.get("ownerReferences")
    if owners:
        out["ownerReferences"] = [{"kind": o.get("kind", ""), "name": o.get("name", "")}
                                  for o in owners]
    return out


def type_meta(kind, scalable=None, restartable=None):
    """TypeMeta of a lower-case kind; scalable/restartable default to the kind's nature."""
    if scalable is None:
        scalable = kind in SCALABLE
    if restartable is None:
        restartable = kind in RESTARTABLE
    out = {"kind": kind}
    if scalable:
        out["scalable"] = True
    if restartable:
        out["restartable"] = True
    return out


def condition(c, probe_field="lastProbeTime"):
    """A Condition; deployments carry lastUpdateTime and nodes lastHeartbeatTime as the probe."""
    return {
        "type": c.get("type", ""),
        "status": c.get("status", ""),
        "lastProbeTime": c.get(probe_field),
        "lastTransitionTime": c.get("lastTransitionTime"),
        "reason": c.get("reason", ""),
        "message": c.get("message", ""),
    }


def conditions(raw, probe_field="lastProbeTime"):
    return [condition(c, probe_field) for c in raw or ()]


def resource_status():
    return {"running": 0, "pending": 0, "failed": 0, "succeeded": 0, "terminating": 0}


def uid(obj):
    return (obj.get("metadata") or {}).get("uid")


def name(obj):
    return (obj.get("metadata") or {}).get("name", "")


def controller_ref(obj):
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None


def controller_uid(obj):
    """The UID of the object's controller owner reference, or None."""
    return (controller_ref(obj) or {}).get("uid")


def spec_images(pod_spec):
    """Every image a pod spec names (containers, init and ephemeral containers): what a
    search's ``image:`` term reads (query/search.py)."""
    pod_spec = pod_spec or {}
    return [c.get("image") or "" for field in ("containers", "initContainers",
                                               "ephemeralContainers")
            for c in pod_spec.get(field) or ()]


def condition_status(obj, type_):
    """The status of the object's condition ``type_`` ("Unknown" when it has none)."""
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == type_:
            return c.get("status", "Unknown")
    return "Unknown"


def container_images(pod_spec, field="containers"):
    """Images of a pod spec's containers; None (JSON null) when there are none, as upstream."""
    images = [c.get("image", "") for c in (pod_spec or {}).get(field) or ()]
    return images or None
