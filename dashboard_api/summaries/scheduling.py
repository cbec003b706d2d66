"""Priority classes (scheduling.k8s.io) and runtime classes (node.k8s.io): what decides where
and how a pod runs, both cluster-wide."""

from dashboard_api.summaries.common import object_meta, type_meta

PREEMPT = "PreemptLowerPriority"   # the API server's default


def priority_class(obj, rel):
    """The list item and the detail."""
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("priorityclass"),
            "value": obj.get("value", 0), "globalDefault": bool(obj.get("globalDefault")),
            "preemptionPolicy": obj.get("preemptionPolicy") or PREEMPT,
            "description": obj.get("description", "")}


def runtime_class(obj, rel):
    """The list item: the container runtime's handler name."""
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("runtimeclass"),
            "handler": obj.get("handler", "")}


def runtime_class_detail(obj, rel):
    """Adds the pod overhead (``{"podFixed": {...}}``) and the scheduling constraints
    (``nodeSelector``, ``tolerations``), null when unset."""
    out = runtime_class(obj, rel)
    out.update(overhead=obj.get("overhead"), scheduling=obj.get("scheduling"))
    return out
