"""One path, several methods: the route table merges routes that share a template."""

import pytest

from dashboard_api.app import openapi, server
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving import routes


class Lister(BaseHandler):
    def initialize(self, kind=None, **kw):
        super().initialize(**kw)
        self.kind = kind

    def get(self):
        pass


class Creator(BaseHandler):
    def post(self):
        pass


class OtherCreator(BaseHandler):
    def post(self):
        pass


def test_routes_of_one_template_become_one_handler_with_every_method():
    table = [routes.Route("/api/v1/thing", Lister, "thing-list", kwargs={"kind": "thing"},
                          auth=True),
             routes.Route("/api/v1/thing", Creator, "thing-create"),
             routes.Route("/api/v1/other", Creator, "other")]
    merged = routes.merged(table)
    assert [r.template for r in merged] == ["/api/v1/thing", "/api/v1/other"]
    thing = merged[0]
    assert thing.methods() == ["get", "post"]
    assert issubclass(thing.handler, Lister) and issubclass(thing.handler, Creator)
    assert thing.kwargs == {"kind": "thing"} and thing.csrf_action == "thing"
    assert thing.needs_token("get") and thing.needs_token("post")
    assert thing.operation("get") == "thing-list" and thing.operation("post") == "thing-create"
    specs = routes.url_specs(table)
    assert len(specs) == 2
    spec = next(s for s in specs if s.target_kwargs["route"].template == "/api/v1/thing")
    assert spec.target_kwargs["route"].methods() == ["get", "post"]
    assert spec.target_kwargs["kind"] == "thing"
    assert issubclass(spec.target, Lister) and issubclass(spec.target, Creator)


def test_two_routes_serving_one_method_of_a_path_are_refused():
    with pytest.raises(ValueError, match="POST /api/v1/thing"):
        routes.merged([routes.Route("/api/v1/thing", Creator, "a"),
                       routes.Route("/api/v1/thing", OtherCreator, "b")])


def test_served_write_paths_share_their_read_paths_in_one_spec():
    served = server.served_routes("dashboard")
    merged = {r.template: r for r in routes.merged(served)}
    assert len(merged) == len({r.template for r in served})
    for template in ("/api/v1/namespace", "/api/v1/secret"):
        assert merged[template].methods() == ["get", "post"], template
    raw = merged["/api/v1/_raw/{kind}/namespace/{namespace}/name/{name}"]
    assert raw.methods() == ["get", "put", "delete"]
    assert merged["/api/v1/scale/{kind}/{namespace}/{name}"].methods() == ["get", "put"]


def test_openapi_lists_every_method_of_every_path():
    doc = openapi.document(server.served_routes("dashboard"))
    paths = doc["paths"]
    assert set(paths["/api/v1/namespace"]) == {"get", "post"}
    assert set(paths["/api/v1/secret"]) == {"get", "post"}
    assert set(paths["/api/v1/_raw/{kind}/name/{name}"]) == {"get", "put", "delete"}
    assert set(paths["/api/v1/scale/{kind}/{name}"]) == {"get", "put"}
    assert set(paths["/api/v1/deployment/{namespace}/{name}/rollback"]) == {"put"}
    post = paths["/api/v1/namespace"]["post"]
    assert post["security"] == [{"bearer": [], "csrf": []}]
    assert paths["/api/v1/_raw/{kind}/name/{name}"]["put"]["security"] == [{"bearer": []}]
    validate = paths["/api/v1/appdeployment/validate/protocol"]["post"]
    assert validate["security"] == []
