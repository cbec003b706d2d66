"""Endpoint slices (discovery.k8s.io v1, or v1beta1 on Kubernetes 1.20): the addresses behind a
service, at most 100 endpoints a slice by default. v1beta1's ``topology`` map carries what v1
names ``nodeName`` and ``zone``; both read the same here."""
from dashboard_api.query import properties
from dashboard_api.query.properties import Property
from dashboard_api.summaries.common import object_meta, type_meta

SERVICE_LABEL = "kubernetes.io/service-name"
_HOSTNAME = "kubernetes.io/hostname"
_ZONE = "topology.kubernetes.io/zone"

PROPERTIES = properties.properties(serviceName=Property(lambda i: i["serviceName"]),
                                   addressType=Property(lambda i: i["addressType"], few=True))


def _target(ref):
    if not ref:
        return None
    return {k: ref.get(k, "") for k in ("kind", "name", "namespace")}


def endpoint(ep):
    """One endpoint: addresses, its conditions as the API server has them (``ready``,
    ``serving``, ``terminating``; an unset ``ready`` means unknown, read as ready), where it
    runs and what it points at."""
    topology = ep.get("topology") or {}
    out = {"addresses": ep.get("addresses") or [], "conditions": ep.get("conditions") or {},
           "hostname": ep.get("hostname"),
           "nodeName": ep.get("nodeName") or topology.get(_HOSTNAME),
           "zone": ep.get("zone") or topology.get(_ZONE),
           "targetRef": _target(ep.get("targetRef"))}
    if ep.get("hints"):
        out["hints"] = ep["hints"]
    return out


def endpoint_slice(obj, rel):
    """The list item and the detail: the address type, the service it belongs to (its
    ``kubernetes.io/service-name`` label, "" when none), ports (a null port: every port) and
    endpoints."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("endpointslice"),
            "addressType": obj.get("addressType", ""),
            "serviceName": labels.get(SERVICE_LABEL, ""),
            "ports": obj.get("ports") or [],
            "endpoints": [endpoint(ep) for ep in obj.get("endpoints") or ()]}
