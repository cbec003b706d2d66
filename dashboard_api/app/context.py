"""What every handler may reach of the process: its options and long-lived services.

What belongs to one cluster (its client, cache, pipeline, settings, sidecar, terminals) is in
clusters.context.ClusterContext; a handler is given its request's cluster (handlers/base.py).
"""

from dashboard_api.app import openapi


class Context:
    """``options`` the flags; ``telemetry`` the /metrics registry; ``csrf`` the CSRF guard
    (its tokens are bound to a cluster, see handlers/base.py); ``routes`` the routes of the
    running mode; ``locales`` the web UI's [(id, name)]; ``lifecycle`` says whether the process
    is ready or going away (lifecycle.Lifecycle); ``oidc`` the OpenID Connect sign-in
    (auth.oidc.SignIn, None without --oidc-issuer-url); ``clusters`` the clusters served
    (clusters.registry.Clusters); ``persons`` who a verified ID token names
    (auth.persons.Persons, None without OpenID Connect); ``audit`` the audit trail
    (audit.trail.AuditTrail, None with --audit-db none)."""

    def __init__(self, options, telemetry, clusters, csrf=None, routes=(), locales=(),
                 lifecycle=None, oidc=None, persons=None, audit=None):
        self.options = options
        self.telemetry = telemetry
        self.clusters = clusters
        self.csrf = csrf
        self.routes = list(routes)
        self.locales = list(locales)
        self.lifecycle = lifecycle
        self.oidc = oidc
        self.persons = persons
        self.audit = audit

    def openapi(self):
        """The OpenAPI description of the routes served (/apidocs.json)."""
        return openapi.document(self.routes)
