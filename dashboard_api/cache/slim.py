"""Slim records: what list summaries, sort and filter keys and related joins read, and no more.

Both sources of a list (the watch cache and the pass-through LIST) slim every object the same
way, so the two give the same bytes. Details (one object) are read whole from the API server.

Dropped everywhere: ``metadata.managedFields`` and the ``kubectl.kubernetes.io/last-applied-
configuration`` annotation (a second copy of the object, often the largest part of it). Pods keep
of their spec and status only what summaries read (node, container names, images and resources,
claims; phase, conditions, container states);
pod templates lose their containers' ``env`` (values); config maps lose their data. Secrets are
never cached; when listed through the API server they are slimmed like any other object.
"""

from sys import intern

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_POD_CONTAINER_FIELDS = ("name", "image", "resources", "restartPolicy")
_POD_SPEC_FIELDS = ("nodeName", "overhead", "serviceAccountName", "priority")
_TEMPLATE_KINDS = frozenset(("deployments", "replicasets", "replicationcontrollers",
                             "daemonsets", "statefulsets", "jobs"))


def _interned(mapping):
    """Label maps repeat across thousands of objects: one copy of each short string."""
    return {intern(k): intern(v) if isinstance(v, str) and len(v) <= 64 else v
            for k, v in mapping.items()}


def metadata(meta):
    if not meta:
        return meta
    out = {intern(k): v for k, v in meta.items() if k != "managedFields"}
    annotations = out.get("annotations")
    if annotations:
        out["annotations"] = _interned({k: v for k, v in annotations.items()
                                        if k != LAST_APPLIED})
    if out.get("labels"):
        out["labels"] = _interned(out["labels"])
    if out.get("namespace"):
        out["namespace"] = intern(out["namespace"])
    return out


def _pod_containers(containers):
    return [{k: c[k] for k in _POD_CONTAINER_FIELDS if k in c} for c in containers]


def pod_spec(spec):
    """A running pod's spec: what pod items, node allocation and log sources read."""
    out = {k: spec[k] for k in _POD_SPEC_FIELDS if k in spec}
    for field in ("containers", "initContainers", "ephemeralContainers"):
        if spec.get(field):
            out[field] = _pod_containers(spec[field])
    claims = [v for v in spec.get("volumes") or () if v.get("persistentVolumeClaim")]
    if claims:
        out["volumes"] = claims
    return out


_POD_STATUS_FIELDS = ("phase", "reason")
_CONDITION_FIELDS = ("type", "status", "reason")
_CONTAINER_STATUS_FIELDS = ("name", "ready", "restartCount", "started", "state")


def pod_status(status):
    """A pod's status: phase, reason, conditions and container states as the display status,
    readiness and warnings read them (the pod detail reads the whole pod from the API server)."""
    out = {k: status[k] for k in _POD_STATUS_FIELDS if k in status}
    if status.get("conditions"):
        out["conditions"] = [{k: c[k] for k in _CONDITION_FIELDS if k in c}
                             for c in status["conditions"]]
    for field in ("initContainerStatuses", "containerStatuses"):
        if status.get(field):
            out[field] = [{k: cs[k] for k in _CONTAINER_STATUS_FIELDS if k in cs}
                          for cs in status[field]]
    return out


def _without_env(containers):
    return [{k: v for k, v in c.items() if k != "env"} for c in containers]


def template_spec(spec):
    """A pod template's spec without its containers' environment values."""
    out = dict(spec)
    for field in ("containers", "initContainers", "ephemeralContainers"):
        if out.get(field):
            out[field] = _without_env(out[field])
    return out


def _with_template(spec, path):
    """``spec`` with the pod template at ``path`` (keys below spec) slimmed."""
    if not spec:
        return spec
    head, rest = path[0], path[1:]
    inner = spec.get(head)
    if not isinstance(inner, dict):
        return spec
    out = dict(spec)
    out[head] = _with_template(inner, rest) if rest else template_spec(inner)
    return out


def slim(plural, obj):
    """The slim record of one object of the resource ``plural`` (a new dict; ``obj`` unchanged)."""
    out = {k: v for k, v in obj.items()}
    if "metadata" in out:
        out["metadata"] = metadata(out["metadata"])
    if plural == "pods":
        if out.get("spec"):
            out["spec"] = pod_spec(out["spec"])
        if out.get("status"):
            out["status"] = pod_status(out["status"])
    elif plural in _TEMPLATE_KINDS:
        out["spec"] = _with_template(out.get("spec"), ("template", "spec"))
    elif plural == "cronjobs":
        out["spec"] = _with_template(out.get("spec"), ("jobTemplate", "spec", "template", "spec"))
    elif plural == "configmaps":
        out.pop("data", None)
        out.pop("binaryData", None)
    return out
