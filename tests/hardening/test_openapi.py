"""The OpenAPI (3.0) document is complete: it validates, every operation is described (responses
with schemas, content types, security, query parameters), still from the route table."""

import jsonschema
import pytest
from openapi_spec_validator import validate

from dashboard_api.app import openapi
from dashboard_api.app.server import served_routes

# Answers without a body: 204s, and the cron job trigger's empty 200 (reference, 8.8).
NO_BODY = {("put", "/api/v1/cronjob/{namespace}/{name}/trigger"),
           ("post", "/api/v1/replicationcontroller/{namespace}/{name}/update/pod")}


@pytest.fixture(scope="module")
def served(cluster):
    from tests.support.gateway import Gateway
    gw = Gateway.start(cluster, "--enable-openapi")
    yield gw, gw.get("/apidocs.json").json()
    gw.stop()


def operations(doc):
    for path, entry in doc["paths"].items():
        for method, op in entry.items():
            yield method, path, op


def test_the_served_document_validates(served):
    validate(served[1])


def test_every_operation_is_described_with_its_success_schema(served):
    doc = served[1]
    count = 0
    for method, path, op in operations(doc):
        count += 1
        assert "x-undescribed" not in op, (method, path)
        # A browser navigation's success is a redirect (the OpenID Connect sign-in's 303s), a
        # WebSocket's the upgrade (the notices', 101).
        success = [code for code in op["responses"] if code.startswith(("101", "2", "3"))]
        assert len(success) == 1, (method, path)
        code = success[0]
        if code in ("101", "204", "303") or (method, path) in NO_BODY:
            assert "content" not in op["responses"][code], (method, path)
        else:
            [(media, content)] = op["responses"][code]["content"].items()
            assert content["schema"], (method, path)
        for error in ("400", "401", "403", "404", "405", "default"):
            assert op["responses"][error]["content"] == {
                "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    assert count >= 160


def test_content_types_and_security(served):
    paths = served[1]["paths"]

    def media(path):
        return list(paths[path]["get"]["responses"]["200"]["content"])

    assert media("/metrics") == ["text/plain"]
    assert media("/api/v1/log/file/{namespace}/{pod}/{container}") == ["text/plain"]
    assert media("/api/v1/pod") == ["application/json"]
    assert paths["/api/v1/pod"]["get"]["security"] == [{"bearer": []}]
    assert paths["/config"]["get"]["security"] == []
    assert paths["/api/v1/namespace"]["post"]["security"] == [{"bearer": [], "csrf": []}]


def test_query_parameters_have_types_and_limits(served):
    paths = served[1]["paths"]
    params = {p["name"]: p["schema"]
              for p in paths["/api/v1/pod/{namespace}"]["get"]["parameters"]}
    assert params["itemsPerPage"] == {"type": "integer", "minimum": 0}
    assert params["page"]["type"] == "integer"
    assert {"filterBy", "sortBy", "metricNames", "aggregations"} <= set(params)
    log = {p["name"]: p["schema"] for p in paths["/api/v1/log/{namespace}/{pod}/{container}"][
        "get"]["parameters"]}
    assert log["previous"]["type"] == "boolean" and log["tailLines"]["minimum"] == 0
    assert log["logFilePosition"]["enum"] == ["beginning", "end"]
    scale = {p["name"]: p for p in paths["/api/v1/scale/{kind}/{namespace}/{name}"]["put"][
        "parameters"]}
    assert scale["scaleBy"]["required"] is True


def plain(schema):
    """OpenAPI 3.0's `nullable` as JSON Schema (what schemathesis does too)."""
    if isinstance(schema, list):
        return [plain(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: plain(v) for k, v in schema.items() if k != "nullable"}
    if schema.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def schema_of(doc, method, path):
    op = doc["paths"][path][method]
    code = [c for c in op["responses"] if c.startswith("2")][0]
    schema = op["responses"][code]["content"]["application/json"]["schema"]
    return plain(dict(schema, components={"schemas": doc["components"]["schemas"]}))


def test_real_answers_match_their_schemas(served, admin_token, seeded_cluster):
    """A few answers checked by hand against the document (the fuzzer checks them all)."""
    gw, doc = served
    for path, template in [("/api/v1/pod/kube-system", "/api/v1/pod/{namespace}"),
                           ("/api/v1/deployment", "/api/v1/deployment"),
                           ("/api/v1/node", "/api/v1/node"),
                           ("/config", "/config"), ("/api/v1/locale", "/api/v1/locale"),
                           ("/api/v1/search?q=kube&itemsPerPage=20", "/api/v1/search")]:
        reply = gw.get(path, token=admin_token)
        assert reply.status == 200, reply
        jsonschema.validate(reply.json(), schema_of(doc, "get", template))
    # And the schemas are not vacuous: a list without listMeta is refused.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"items": []}, schema_of(doc, "get", "/api/v1/pod"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"listMeta": {"totalItems": 1}, "items": [{"objectMeta": {}}]},
                            schema_of(doc, "get", "/api/v1/pod"))


def test_every_kind_has_a_list_and_item_definition():
    doc = openapi.document(served_routes("dashboard"))
    from dashboard_api.kinds import table as kinds
    for kind in kinds.TABLE:
        assert "List." + kind.name in doc["components"]["schemas"]
        assert "Item." + kind.name in doc["components"]["schemas"]
