"""The OpenAPI 3.0 description of the routes being served.

Upstream publishes Swagger 2.0; 3.0 is used here because 2.0 cannot say what these routes do:
its media types are per operation, where a 204 has none, the log file answers text/plain and
its errors JSON; and it has no null, which many summary fields may be.

Built from the route table at request time, so it lists exactly what the running mode serves;
what each route answers and takes comes from dashboard_api/app/apimodels.py (the kinds table for
the list, detail and sublist routes of every kind). Every operation documents its success
response with its schema (none only where the answer has no body), the errors it may answer
with the error body, its content types, its security and its query parameters.
"""

from dashboard_api.app import apimodels
from dashboard_api.app.apimodels import DATASELECT, Op, ref
from dashboard_api.kinds import table as kinds
from dashboard_api.version import VERSION

TITLE = "Kubernetes Dashboard API"
ERROR_SCHEMA = apimodels.COMMON["Error"]

ERRORS = {
    "400": "bad parameters or body",
    "401": "no or an invalid Bearer token",
    "403": "the token may not do this (the API server's message), or a bad CSRF token",
    "404": "no such object, kind or path",
    "405": "the path does not serve this method (Allow lists those it does)",
    "413": "the request body is larger than --max-body-size (or the route's own smaller limit)",
}
BODY_METHODS = ("post", "put", "patch")
PATH_EXAMPLES = {"namespace": "default", "kind": "deployment"}


def kind_operation(route):
    """The Op of a list, detail or sublist route of the kinds table, or None."""
    name = route.kwargs.get("kind")
    if not name:
        return None
    kind = kinds.get(name)
    handler = route.handler.__name__
    if handler == "ListHandler":
        return Op(schema=ref("List." + kind.name), params=DATASELECT)
    if handler == "DetailHandler":
        return Op(schema=ref("Detail." + kind.name), params=DATASELECT)
    if handler == "SublistHandler":
        sub = kind.sublist(route.kwargs["suffix"])
        if sub.respond is None:
            return Op(schema=ref("List." + sub.kind), params=DATASELECT)
        if sub.suffix == "container":
            return Op(schema=ref("Containers"))
        return Op(schema=apimodels.nullable(ref("Item." + sub.kind)), params=DATASELECT)
    return None


def describe(route, method):
    """The Op of ``method`` on ``route``, or None when nothing describes it."""
    described = apimodels.OPERATIONS.get(route.name, {}).get(method)
    if described is None and method == "get":
        described = kind_operation(route)
    return described


def json_content(schema):
    return {"application/json": {"schema": schema}}


def operation(route, method):
    described = describe(route, method)
    undescribed = described is None
    if undescribed:
        # A route added without a description still appears (as an open object), marked so
        # that tests/hardening/test_openapi.py names it.
        described = Op(schema={"type": "object"},
                       body={"type": "object"} if method in BODY_METHODS else None)
    params = []
    for name in route.params:
        param = {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        if name in PATH_EXAMPLES:
            param["example"] = PATH_EXAMPLES[name]
        params.append(param)
    params += described.params
    success = {"description": "Success"}
    if described.schema is not None:
        success["content"] = {described.produces: {"schema": described.schema}}
    else:
        success["description"] = "Success (no body)"
    responses = {str(described.status): success}
    for code, why in ERRORS.items():
        if code == "413" and method not in BODY_METHODS:
            continue
        responses[code] = {"description": why, "content": json_content(ref("Error"))}
    responses["default"] = {"description": "other errors (409, 422, 429, 5xx)",
                            "content": json_content(ref("Error"))}
    security = []
    if route.needs_token(method):
        requirement = {"bearer": []}
        if method == "post" and route.csrf_action:
            requirement["csrf"] = []
        security = [requirement]
    elif method == "post" and route.csrf_action:
        security = [{"csrf": []}]
    op = {
        "operationId": "%s-%s" % (method, route.name),
        "tags": [route.resource],
        "parameters": params,
        "responses": responses,
        "security": security,
    }
    if described.body is not None:
        op["requestBody"] = {"required": True, "content": json_content(described.body)}
    if route.summary:
        op["summary"] = route.summary
    if undescribed:
        op["x-undescribed"] = True
    if method == "post" and route.csrf_action:
        op["description"] = ("Needs X-CSRF-TOKEN from GET /api/v1/csrftoken/%s."
                             % route.csrf_action)
    return op


def definitions():
    out = dict(apimodels.COMMON)
    out.update(apimodels.RECORDS)
    for kind in kinds.TABLE:
        out["Item." + kind.name] = apimodels.item_schema(kind)
        out["List." + kind.name] = apimodels.list_schema(kind)
        if kind.detail is not None:
            out["Detail." + kind.name] = apimodels.detail_schema(kind)
    return out


def document(routes):
    paths = {}
    for route in sorted(routes, key=lambda r: r.template):
        entry = paths.setdefault(route.template, {})
        for method in route.methods():
            entry[method] = operation(route, method)
    return {
        "openapi": "3.0.3",
        "info": {"title": TITLE, "version": VERSION},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": definitions(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer",
                           "description": "Authorization: Bearer <token>, a service-account "
                                          "or OIDC token"},
                "csrf": {"type": "apiKey", "in": "header", "name": "X-CSRF-TOKEN",
                         "description": "a one-time token from GET /api/v1/csrftoken/{action}, "
                                        "action = the first path segment after /api/v1/"}},
        },
    }
