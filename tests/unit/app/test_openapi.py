"""/apidocs.json is generated from the route table, so every served route is in it."""

from dashboard_api.app import openapi, server
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving import routes


def test_every_route_and_method_is_described():
    served = server.served_routes("dashboard")
    doc = openapi.document(served)
    assert doc["openapi"] == "3.0.3" and doc["info"]["title"] == "Kubernetes Dashboard API"
    for route in served:
        for method in route.methods():
            op = doc["paths"][route.template][method]
            assert [p["name"] for p in op["parameters"] if p["in"] == "path"] == route.params
    ops = [op for entry in doc["paths"].values() for op in entry.values()]
    assert len({op["operationId"] for op in ops}) == len(ops)


def test_security_csrf_and_bodies():
    class H(BaseHandler):
        def get(self):
            pass

        def post(self):
            pass

        def put(self):
            pass

    doc = openapi.document([
        routes.Route("/api/v1/thing/{name}", H, "thing"),
        routes.Route("/settings", H, "settings", auth=("put",), component="web"),
        routes.Route("/api/v1/appdeployment/validate/name", H, "v", csrf=False),
    ])
    thing = doc["paths"]["/api/v1/thing/{name}"]
    assert thing["get"]["security"] == [{"bearer": []}]
    # POSTs need the CSRF header as a second credential (a security scheme, not a parameter).
    assert thing["post"]["security"] == [{"bearer": [], "csrf": []}]
    assert doc["components"]["securitySchemes"]["csrf"]["name"] == "X-CSRF-TOKEN"
    assert [p["name"] for p in thing["post"]["parameters"]] == ["name"]
    assert "requestBody" in thing["post"] and "requestBody" in thing["put"]
    assert thing["get"]["x-undescribed"] is True   # not in apimodels.OPERATIONS
    settings = doc["paths"]["/settings"]
    assert settings["get"]["security"] == [] and settings["put"]["security"] == [{"bearer": []}]
    validate = doc["paths"]["/api/v1/appdeployment/validate/name"]["post"]
    assert validate["security"] == [{"bearer": []}]


def test_mode_api_leaves_out_auth_and_web_routes():
    templates = {r.template for r in server.served_routes("api")}
    assert "/api/v1/can-i" in templates and "/api/v1/csrftoken/{action}" in templates
    assert "/api/v1/login" not in templates and "/config" not in templates
    assert "/settings" not in templates and "/api/v1/settings/global" in templates


def test_oidc_routes_served_and_described_only_when_configured():
    plain = {r.template for r in server.served_routes("dashboard")}
    with_oidc = server.served_routes("dashboard", ("oidc",))
    oidc = {r.template for r in with_oidc} - plain
    assert oidc == {"/oidc/login", "/oidc/callback", "/oidc/refresh", "/oidc/logout",
                    "/oidc/session.js"}
    doc = openapi.document(with_oidc)
    for template in oidc:
        for method, op in doc["paths"][template].items():
            assert "x-undescribed" not in op, (method, template)
            assert op["security"] == []
    assert "303" in doc["paths"]["/oidc/callback"]["get"]["responses"]
