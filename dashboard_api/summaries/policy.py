"""Pod disruption budgets (reference §5.3), policy/v1 or policy/v1beta1 (same fields)."""

from dashboard_api.summaries.common import object_meta, type_meta


def budget(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    out = {"objectMeta": object_meta(obj), "typeMeta": type_meta("poddisruptionbudget"),
           "minAvailable": spec.get("minAvailable"), "maxUnavailable": spec.get("maxUnavailable"),
           "unhealthyPodEvictionPolicy": spec.get("unhealthyPodEvictionPolicy"),
           "currentHealthy": status.get("currentHealthy", 0),
           "desiredHealthy": status.get("desiredHealthy", 0),
           "disruptionsAllowed": status.get("disruptionsAllowed", 0),
           "expectedPods": status.get("expectedPods", 0)}
    if spec.get("selector") is not None:
        out["labelSelector"] = spec["selector"]
    return out


def budget_detail(obj, rel):
    out = budget(obj, rel)
    out["disruptedPods"] = (obj.get("status") or {}).get("disruptedPods")
    return out
