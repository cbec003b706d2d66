"""The route table: every path the gateway serves, in one place.

Each handler module exports ``ROUTES``, a list of serving.routes.Route. This table becomes
Tornado's URL specs and the OpenAPI document, so the two cannot drift apart. A feature adds
its module here.
"""

from dashboard_api.handlers import (appdeployment, audit, cani, clusterinfo, creates,
                                    customresources, drain, health, integrations, live, logs,
                                    oidc, raw, resources, scale, search, settings, shell, signin,
                                    system, workloadops)

# In the order their routes are listed (the OpenAPI document's order).
ROUTE_MODULES = (
    cani, signin, oidc, clusterinfo, settings, system, health, integrations, resources,
    search, live, customresources, logs, shell,
    # Writes (issue 9).
    raw, scale, workloadops, drain, creates, appdeployment,
    # The audit trail of those writes and of terminals (issue #39).
    audit,
)


def all_routes():
    """Every route of every component; app/server.py picks those of the running mode."""
    return [route for module in ROUTE_MODULES for route in module.ROUTES]
