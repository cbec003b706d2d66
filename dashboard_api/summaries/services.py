"""Services (reference §5.3): the list item with its internal and external endpoints, the
detail with the addresses of its Endpoints object, and the service's pods and ingresses."""
from dashboard_api.query import properties
from dashboard_api.query.properties import Property
from dashboard_api.query.reads import Api, Need, Sublist, scope_of
from dashboard_api.summaries import networking
from dashboard_api.summaries.common import name, object_meta, type_meta
from dashboard_api.summaries.labelselector import to_query

PROPERTIES = properties.properties(type=Property(lambda s: s["type"], few=True))

ENDPOINTS = Api("", "endpoints")


def _ports(spec):
    return [{"port": p.get("port", 0), "protocol": p.get("protocol", "TCP"),
             "nodePort": p.get("nodePort", 0)} for p in spec.get("ports") or ()]


def internal_endpoint(obj):
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    ns = meta.get("namespace", "")
    host = meta.get("name", "") if ns in ("", "default") else "%s.%s" % (meta.get("name"), ns)
    return {"host": host, "ports": _ports(spec)}


def external_endpoints(obj):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ports = _ports(spec)
    out = []
    if spec.get("type") == "LoadBalancer":
        for ingress in (status.get("loadBalancer") or {}).get("ingress") or ():
            out.append({"host": ingress.get("hostname") or ingress.get("ip", ""), "ports": ports})
    for ip in spec.get("externalIPs") or ():
        out.append({"host": ip, "ports": ports})
    return out


def item(obj, rel):
    spec = obj.get("spec") or {}
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("service"),
            "internalEndpoint": internal_endpoint(obj),
            "externalEndpoints": external_endpoints(obj), "selector": spec.get("selector"),
            "type": spec.get("type", ""), "clusterIP": spec.get("clusterIP", "")}


# --- detail ----------------------------------------------------------------------------------

def detail_needs(obj, rel):
    """The core/v1 Endpoints object of the same name (absent for a service without one)."""
    return [Need("endpoints", ENDPOINTS, scope_of(obj), name=name(obj))]


def endpoint_addresses(endpoints):
    """One entry per address of every subset, ready ones before not-ready ones per subset."""
    out = []
    for subset in (endpoints or {}).get("subsets") or ():
        ports = subset.get("ports") or []
        for ready, field in ((True, "addresses"), (False, "notReadyAddresses")):
            for address in subset.get(field) or ():
                out.append({"objectMeta": {"creationTimestamp": None},
                            "typeMeta": {"kind": "endpoint"}, "host": address.get("ip", ""),
                            "nodeName": address.get("nodeName"), "ready": ready, "ports": ports})
    return out


def detail(obj, rel):
    out = item(obj, rel)
    addresses = endpoint_addresses(rel.get("endpoints"))
    out.update(endpointList={"listMeta": {"totalItems": len(addresses)}, "endpoints": addresses},
               sessionAffinity=(obj.get("spec") or {}).get("sessionAffinity", ""), errors=[])
    return out


# --- sublists --------------------------------------------------------------------------------

def _selector(obj):
    return (obj.get("spec") or {}).get("selector") or {}


# A service without a selector selects no pods (an empty selector would select them all).
PODS = Sublist(
    "pod", "pod",
    lambda obj: [Need("pods", namespaces=scope_of(obj), labels=to_query(_selector(obj)),
                      critical=True)] if _selector(obj) else [],
    pick=lambda obj, rel, arg: rel["pods"])

INGRESSES = Sublist(
    "ingress", "ingress",
    lambda obj: [Need("ingresses", "ingress", scope_of(obj), critical=True)],
    pick=lambda obj, rel, arg: [i for i in rel["ingresses"]
                                if networking.targets_service(i, name(obj))])
