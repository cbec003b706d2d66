"""Custom resource definitions and their objects (reference §5.5).

Objects are read with the CRD's first served version at the REST path the CRD itself names
(``resource_of``), so a CRD created a moment ago works before discovery has seen it.
"""
from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.query import properties
from dashboard_api.summaries.common import (condition_status, conditions, name, object_meta,
                                            type_meta)

# The CRD list has no namespace property (the objects' lists do).
PROPERTIES = properties.properties(namespace=None)

_OPTIONAL_NAMES = ("singular", "shortNames", "listKind", "categories")


def _served_versions(obj):
    return [v for v in (obj.get("spec") or {}).get("versions") or () if v.get("served")]


def has_served_version(obj):
    """CRDs that serve no version are left out of the CRD list."""
    return bool(_served_versions(obj))


def _first_served(obj):
    served = _served_versions(obj)
    return served[0] if served else {}


def _subresources(obj):
    """``scale`` and/or ``status``, as the first served version declares them."""
    declared = _first_served(obj).get("subresources") or {}
    return [s for s in ("scale", "status") if declared.get(s) is not None]


def _names(obj):
    accepted = (obj.get("status") or {}).get("acceptedNames") or {}
    out = {"plural": accepted.get("plural", ""), "kind": accepted.get("kind", "")}
    out.update({f: accepted[f] for f in _OPTIONAL_NAMES if accepted.get(f)})
    return out


def item(obj, rel):
    spec = obj.get("spec") or {}
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("customresourcedefinition"),
            "version": _first_served(obj).get("name", ""), "group": spec.get("group", ""),
            "scope": spec.get("scope", ""), "names": _names(obj),
            "established": condition_status(obj, "Established")}


# --- objects ---------------------------------------------------------------------------------

def resource_of(obj):
    """The Resource serving the CRD's objects, or None when it serves no version."""
    version = _first_served(obj)
    if not version:
        return None
    spec = obj.get("spec") or {}
    names = spec.get("names") or {}
    return Resource(spec.get("group", ""), version.get("name", ""), names.get("plural", ""),
                    names.get("kind", ""), spec.get("scope") == "Namespaced",
                    _subresources(obj))


def object_summary(crd):
    """``summary(obj, rel)`` of the objects of ``crd``: their metadata, typed by the CRD's name."""
    meta = type_meta(name(crd), scalable="scale" in _subresources(crd), restartable=False)
    return lambda obj, rel: {"typeMeta": dict(meta), "objectMeta": object_meta(obj)}


def object_detail(crd, obj):
    """Metadata only, as upstream (the UI shows the object itself through ``_raw``)."""
    out = object_summary(crd)(obj, None)
    out["errors"] = []
    return out


def list_type_meta(crd):
    """The object list's own typeMeta, as the API server names its lists (``FooList``)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    resource = resource_of(crd)
    return {"kind": names.get("listKind") or names.get("kind", "") + "List",
            "apiVersion": resource.api_version if resource else ""}


# --- detail ----------------------------------------------------------------------------------

def detail(obj, objects):
    """The CRD's detail around ``objects``, the first of its objects as Pipeline.assemble
    enveloped them; a failed read of them is reported in the detail's ``errors`` only."""
    out = item(obj, None)
    versions = [{"name": v.get("name", ""), "served": bool(v.get("served")),
                 "storage": bool(v.get("storage"))}
                for v in (obj.get("spec") or {}).get("versions") or ()]
    if versions:
        out["versions"] = versions
    out.update(conditions=conditions((obj.get("status") or {}).get("conditions")),
               objects={"typeMeta": list_type_meta(obj), "listMeta": objects["listMeta"],
                        "items": objects["items"], "errors": []},
               subresources=[s.capitalize() for s in _subresources(obj)], errors=[])
    return out
