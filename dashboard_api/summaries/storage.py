"""Persistent volume claims, persistent volumes and storage classes (reference §5.3)."""
from dashboard_api.query import properties
from dashboard_api.query.properties import Property
from dashboard_api.query.reads import ALL, Need, Sublist
from dashboard_api.summaries.common import name, object_meta, type_meta

VOLUME_PROPERTIES = properties.properties(status=Property(lambda v: v["status"], few=True))

# Fields of a PersistentVolumeSpec that are not its volume source.
_NOT_SOURCE = frozenset(("capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
                         "storageClassName", "mountOptions", "volumeMode", "nodeAffinity"))


def claim(obj, rel):
    """The list item, and the detail too (upstream's detail has the same fields)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("persistentvolumeclaim"),
            "status": status.get("phase", ""), "volume": spec.get("volumeName", ""),
            "capacity": status.get("capacity") or {}, "accessModes": spec.get("accessModes") or [],
            "storageClass": spec.get("storageClassName")}


def claim_phase(obj):
    """A claim's phase (Bound, Pending, Lost): what its list shows as its status."""
    return (obj.get("status") or {}).get("phase") or ""


def _claim_of(spec):
    ref = spec.get("claimRef") or {}
    return "%s/%s" % (ref.get("namespace", ""), ref.get("name", "")) if ref else ""


def volume(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("persistentvolume"),
            "capacity": spec.get("capacity") or {}, "accessModes": spec.get("accessModes") or [],
            "reclaimPolicy": spec.get("persistentVolumeReclaimPolicy", ""),
            "storageClass": spec.get("storageClassName", ""),
            "mountOptions": spec.get("mountOptions") or [], "status": status.get("phase", ""),
            "claim": _claim_of(spec), "reason": status.get("reason", "")}


def volume_detail(obj, rel):
    """Adds the status message and the volume source (``{"hostPath": {...}}``, ...)."""
    spec = obj.get("spec") or {}
    out = volume(obj, rel)
    out.update(message=(obj.get("status") or {}).get("message", ""),
               persistentVolumeSource={k: v for k, v in spec.items() if k not in _NOT_SOURCE})
    return out


def storage_class(obj, rel):
    """The list item and the detail."""
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("storageclass"),
            "provisioner": obj.get("provisioner", ""), "parameters": obj.get("parameters") or {}}


CLASS_VOLUMES = Sublist(
    "persistentvolume", "persistentvolume",
    lambda obj: [Need("volumes", "persistentvolume", ALL, critical=True)],
    pick=lambda obj, rel, arg: [v for v in rel["volumes"]
                                if (v.get("spec") or {}).get("storageClassName") == name(obj)])
