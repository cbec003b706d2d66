"""Config maps and secrets (reference §5.3). Secret values appear in the secret detail only."""

from dashboard_api.summaries.common import object_meta, type_meta

# kubectl apply copies the whole object, values included, into this annotation.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def config_map(obj, rel):
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("configmap")}


def config_map_detail(obj, rel):
    out = config_map(obj, rel)
    if obj.get("data"):
        out["data"] = obj["data"]
    return out


def secret(obj, rel):
    """The list item: no values, and not the last-applied annotation that would carry them
    (upstream listed it)."""
    meta = object_meta(obj)
    if LAST_APPLIED in (meta.get("annotations") or {}):
        meta["annotations"] = {k: v for k, v in meta["annotations"].items() if k != LAST_APPLIED}
        if not meta["annotations"]:
            del meta["annotations"]
    return {"objectMeta": meta, "typeMeta": type_meta("secret"), "type": obj.get("type", "")}


def secret_detail(obj, rel):
    """The secret with its values, base64 as Kubernetes stores them."""
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("secret"),
            "type": obj.get("type", ""), "data": obj.get("data") or {}}
