"""CSI drivers (storage.k8s.io): how Kubernetes talks to each installed storage driver."""

from dashboard_api.summaries.common import object_meta, type_meta

# The API server's defaults, for objects read from a server that predates a field.
_ITEM_DEFAULTS = (("attachRequired", True), ("podInfoOnMount", False),
                  ("volumeLifecycleModes", ["Persistent"]), ("storageCapacity", False),
                  ("fsGroupPolicy", None))
_DETAIL_DEFAULTS = (("requiresRepublish", False), ("tokenRequests", None),
                    ("seLinuxMount", None))


def _fields(spec, defaults):
    return {field: spec[field] if spec.get(field) is not None else default
            for field, default in defaults}


def driver(obj, rel):
    """The list item: whether volumes are attached, whether the driver gets the pod's details
    on mount, the volume lifecycle modes (Persistent, Ephemeral), whether it reports storage
    capacity, and its fsGroup policy."""
    out = {"objectMeta": object_meta(obj), "typeMeta": type_meta("csidriver")}
    out.update(_fields(obj.get("spec") or {}, _ITEM_DEFAULTS))
    return out


def driver_detail(obj, rel):
    """Adds requiresRepublish, tokenRequests and seLinuxMount."""
    out = driver(obj, rel)
    out.update(_fields(obj.get("spec") or {}, _DETAIL_DEFAULTS))
    return out
