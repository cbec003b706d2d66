"""Resource quotas and limit ranges: their own lists and details, and the parts the namespace
detail embeds (``resourceQuotaList`` items and ``resourceLimits``, reference §5.4), built by the
same functions so the two never differ."""

from dashboard_api.summaries.common import object_meta, type_meta

# --- resource quotas -------------------------------------------------------------------------


def quota(obj, rel=None):
    """The list item (upstream's ResourceQuotaDetail): ``scopes`` when set, and ``statusList``
    ``{resource: {"used", "hard"}}`` (empty values omitted). ``hard`` is the quota controller's
    (status); before it has counted, the spec's, without ``used``."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    out = {"objectMeta": object_meta(obj), "typeMeta": type_meta("resourcequota")}
    if spec.get("scopes"):
        out["scopes"] = spec["scopes"]
    hard, used = status.get("hard") or spec.get("hard") or {}, status.get("used") or {}
    if hard:
        out["statusList"] = {res: {k: v for k, v in (("used", used.get(res)), ("hard", q)) if v}
                             for res, q in hard.items()}
    return out


def quota_detail(obj, rel):
    """The item plus the scope selector (``{"matchExpressions": [...]}``) when there is one."""
    out = quota(obj, rel)
    selector = (obj.get("spec") or {}).get("scopeSelector")
    if selector:
        out["scopeSelector"] = selector
    return out


# --- limit ranges ----------------------------------------------------------------------------

LIMIT_FIELDS = ("min", "max", "default", "defaultRequest", "maxLimitRequestRatio")


def limit_items(limit_range):
    """Upstream's LimitRangeItem rows of one LimitRange: one per (type, resource), with each of
    min, max, default, defaultRequest, maxLimitRequestRatio that is set."""
    out = []
    for limit in (limit_range.get("spec") or {}).get("limits") or ():
        resources = []
        for field in LIMIT_FIELDS:
            resources += [r for r in limit.get(field) or {} if r not in resources]
        for res in resources:
            entry = {"resourceName": res, "resourceType": limit.get("type", "")}
            for field in LIMIT_FIELDS:
                value = (limit.get(field) or {}).get(res)
                if value:
                    entry[field] = value
            out.append(entry)
    return out


def limit_range(obj, rel):
    """The list item and the detail: ``limits`` as the namespace detail's ``resourceLimits``."""
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("limitrange"),
            "limits": limit_items(obj)}
