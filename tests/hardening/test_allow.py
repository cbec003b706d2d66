"""405 answers name the methods of their path in `Allow` (RFC 9110, 15.5.6), from the route
table, with the JSON error body."""

import pytest

from dashboard_api.app.server import served_routes
from dashboard_api.serving import routes
from tests.gateway.helpers import assert_error


def methods_of(template):
    [route] = [r for r in routes.merged(served_routes("dashboard")) if r.template == template]
    return {m.upper() for m in route.methods()}


@pytest.mark.parametrize("method,path,template", [
    ("DELETE", "/api/v1/pod", "/api/v1/pod"),
    ("PATCH", "/api/v1/namespace", "/api/v1/namespace"),                 # GET + POST merged
    ("POST", "/api/v1/_raw/deployment/namespace/default/name/x",
     "/api/v1/_raw/{kind}/namespace/{namespace}/name/{name}"),           # GET, PUT, DELETE
    ("GET", "/api/v1/deployment/default/x/pause", "/api/v1/deployment/{namespace}/{name}/pause"),
    ("OPTIONS", "/config", "/config"),
    ("HEAD", "/api/v1/csrftoken/login", "/api/v1/csrftoken/{action}"),
])
def test_405_lists_exactly_the_methods_of_the_path(gateway, admin_token, method, path, template):
    reply = gateway.request(method, path, token=admin_token)
    assert reply.status == 405, reply
    assert set(reply.headers["Allow"].split(", ")) == methods_of(template)
    if method != "HEAD":
        assert_error(reply, 405, "MethodNotAllowed")


def test_merged_paths_allow_every_merged_method():
    # The table itself: a path served by a list (GET) and a create (POST) allows both.
    assert methods_of("/api/v1/namespace") == {"GET", "POST"}
    assert methods_of("/api/v1/_raw/{kind}/namespace/{namespace}/name/{name}") == \
        {"GET", "PUT", "DELETE"}
