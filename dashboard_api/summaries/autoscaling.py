"""Horizontal pod autoscalers (reference §5.3) in the autoscaling/v1 wire shape, read as
autoscaling/v2, v2beta2 or v1, whichever discovery finds first: the CPU percentages come from
v1's fields or from the ``Resource`` cpu metric of the newer versions."""

from dashboard_api.summaries.common import object_meta, type_meta


def _cpu_utilization(metrics, field):
    """averageUtilization of the cpu Resource metric's ``field`` (target or current)."""
    for metric in metrics or ():
        resource = metric.get("resource") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            return (resource.get(field) or {}).get("averageUtilization")
    return None


def item(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    target = spec.get("scaleTargetRef") or {}
    current_cpu = status.get("currentCPUUtilizationPercentage")
    if current_cpu is None:
        current_cpu = _cpu_utilization(status.get("currentMetrics"), "current")
    target_cpu = spec.get("targetCPUUtilizationPercentage")
    if target_cpu is None:
        target_cpu = _cpu_utilization(spec.get("metrics"), "target")
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("horizontalpodautoscaler"),
            "scaleTargetRef": {"kind": target.get("kind", ""), "name": target.get("name", "")},
            "minReplicas": spec.get("minReplicas"), "maxReplicas": spec.get("maxReplicas", 0),
            "currentCPUUtilizationPercentage": current_cpu,
            "targetCPUUtilizationPercentage": target_cpu}


def detail(obj, rel):
    status = obj.get("status") or {}
    out = item(obj, rel)
    out.update(currentReplicas=status.get("currentReplicas", 0),
               desiredReplicas=status.get("desiredReplicas", 0),
               lastScaleTime=status.get("lastScaleTime"))
    return out


def targets(obj, kind, name):
    """Whether the autoscaler scales the object ``kind``/``name`` (kind compared lower-case)."""
    target = (obj.get("spec") or {}).get("scaleTargetRef") or {}
    return (target.get("kind") or "").lower() == kind and target.get("name") == name
