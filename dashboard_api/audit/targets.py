"""Which object a write route changes, from its path alone (pure).

``kind`` is the lower-case kind of our lists (``deployment``; for custom objects the
``<plural>.<group>`` the route was given), as the routes and the UI spell it. A route whose
first segment after ``/api/v1/`` is a kind of the kinds table changes an object of that kind
(``/api/v1/deployment/{namespace}/{name}/restart``); the raw and scale routes name theirs in
``{kind}``; the settings routes change the settings ConfigMap in ``--namespace``. Handlers
that learn their objects from the body or from discovery (creates, application deployment,
the raw and scale routes once resolved) say so themselves (``BaseHandler.audit_targets``).
"""

from __future__ import annotations

from dashboard_api.audit.entry import Target
from dashboard_api.kinds import table as kinds

API_PREFIX = "/api/v1/"
SETTINGS_ROUTES = ("/api/v1/settings/", "/settings")


def of_kind(name, namespace="", object_name=""):
    """The Target of a kind as a route names it (a table kind, or ``<plural>.<group>``)."""
    lowered = (name or "").lower()
    row = kinds.KINDS.get(lowered)
    if row is not None:
        return Target(row.name, row.group, row.plural, namespace, object_name)
    if "." in lowered:
        plural, group = lowered.split(".", 1)
        return Target(lowered, group, plural, namespace, object_name)
    return Target(lowered, "", "", namespace, object_name)   # unknown: admins only


def of_resource(resource, namespace="", name=""):
    """The Target of a discovery Resource (kubeapi.discovery.Resource)."""
    row = kinds.of_resource(resource.group, resource.plural)
    kind = row.name if row is not None else \
        (resource.plural + "." + resource.group if resource.group else resource.kind.lower())
    return Target(kind, resource.group, resource.plural, namespace, name)


def from_route(template, params, settings_namespace="", settings_name=""):
    """The Target a write route's path names (``params``: its path arguments)."""
    namespace = params.get("namespace") or ""
    name = params.get("name") or ""
    if template.startswith(SETTINGS_ROUTES):
        return Target("configmap", "", "configmaps", settings_namespace, settings_name)
    if "kind" in params:
        return of_kind(params["kind"], namespace, name)
    if template.startswith(API_PREFIX):
        first = template[len(API_PREFIX):].split("/", 1)[0]
        if first in kinds.KINDS:
            return of_kind(first, namespace, name)
    return Target("", "", "", namespace, name)
