"""Ingresses, ingress classes and network policies (reference §5.3)."""

from dashboard_api.summaries.common import object_meta, type_meta


# --- ingresses -------------------------------------------------------------------------------

def _backends(obj):
    """Every backend of the ingress: the default one, then those of the rules' HTTP paths
    (networking/v1 ``defaultBackend``, v1beta1 ``backend``)."""
    spec = obj.get("spec") or {}
    yield spec.get("defaultBackend") or spec.get("backend") or {}
    for rule in spec.get("rules") or ():
        for path in (rule.get("http") or {}).get("paths") or ():
            yield path.get("backend") or {}


def _backend_service(backend):
    if backend.get("service"):
        return backend["service"].get("name")
    if backend.get("serviceName"):
        return backend["serviceName"]
    resource = backend.get("resource") or {}
    if (resource.get("kind") or "").lower() == "service":
        return resource.get("name")
    return None


def targets_service(obj, service):
    """Whether any backend of the ingress sends traffic to the service named ``service``."""
    return any(_backend_service(b) == service for b in _backends(obj))


def _hosts(obj):
    hosts = []
    for rule in (obj.get("spec") or {}).get("rules") or ():
        host = rule.get("host")
        if host and host not in hosts:
            hosts.append(host)
    return hosts


def ingress(obj, rel):
    balancers = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or ()
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("ingress"),
            "endpoints": [{"host": b.get("hostname") or b.get("ip", ""), "ports": None}
                          for b in balancers],
            "hosts": _hosts(obj)}


def ingress_detail(obj, rel):
    out = ingress(obj, rel)
    out.update(spec=obj.get("spec") or {}, status=obj.get("status") or {}, errors=[])
    return out


# --- ingress classes -------------------------------------------------------------------------

_PARAMETER_KEYS = (("apiGroup", "ApiGroup"), ("namespace", "Namespace"), ("scope", "Scope"))


def ingress_class(obj, rel):
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("ingressclass"),
            "controller": (obj.get("spec") or {}).get("controller", "")}


def ingress_class_detail(obj, rel):
    """Adds ``parameters`` with upstream's capitalised keys; Kind and Name always, the others
    when set, an empty map when the class has no parameters."""
    params = (obj.get("spec") or {}).get("parameters")
    out = ingress_class(obj, rel)
    parameters = {}
    if params:
        parameters = {"Kind": params.get("kind", ""), "Name": params.get("name", "")}
        parameters.update({wire: params[field] for field, wire in _PARAMETER_KEYS
                           if params.get(field)})
    out["parameters"] = parameters
    return out


# --- network policies ------------------------------------------------------------------------

def network_policy(obj, rel):
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("networkpolicy")}


def network_policy_detail(obj, rel):
    spec = obj.get("spec") or {}
    out = network_policy(obj, rel)
    out["podSelector"] = spec.get("podSelector") or {}
    for field in ("ingress", "egress", "policyTypes"):
        if spec.get(field):
            out[field] = spec[field]
    out["errors"] = []
    return out
