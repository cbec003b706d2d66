"""The OpenAPI (Swagger 2.0, as upstream publishes) description of the routes being served.

Built from the route table at request time, so it lists exactly what the running mode serves.
"""

from dashboard_api.version import VERSION

TITLE = "Kubernetes Dashboard API"
ERROR_SCHEMA = {
    "type": "object",
    "required": ["status", "message", "code"],
    "properties": {
        "status": {"type": "string", "enum": ["Failure"]},
        "message": {"type": "string"},
        "reason": {"type": "string", "description": "e.g. NotFound, Unauthorized, Forbidden"},
        "code": {"type": "integer", "description": "the HTTP status"},
    },
}


def operation(route, method):
    params = [{"name": p, "in": "path", "required": True, "type": "string"}
              for p in route.params]
    if method in ("post", "put", "patch"):
        params.append({"name": "body", "in": "body", "required": False,
                       "schema": {"type": "object"}})
    if method == "post" and route.csrf_action:
        params.append({"name": "X-CSRF-TOKEN", "in": "header", "required": True, "type": "string",
                       "description": "from GET /api/v1/csrftoken/%s" % route.csrf_action})
    op = {
        "operationId": "%s-%s" % (method, route.name),
        "tags": [route.resource],
        "parameters": params,
        "responses": {"200": {"description": "Success"},
                      "default": {"description": "Error",
                                  "schema": {"$ref": "#/definitions/Error"}}},
        "security": [{"bearer": []}] if route.needs_token(method) else [],
    }
    if route.summary:
        op["summary"] = route.summary
    return op


def document(routes):
    paths = {}
    for route in sorted(routes, key=lambda r: r.template):
        entry = paths.setdefault(route.template, {})
        for method in route.methods():
            entry[method] = operation(route, method)
    return {
        "swagger": "2.0",
        "info": {"title": TITLE, "version": VERSION},
        "basePath": "/",
        "consumes": ["application/json"],
        "produces": ["application/json"],
        "securityDefinitions": {"bearer": {
            "type": "apiKey", "in": "header", "name": "Authorization",
            "description": "Bearer <token>: a service-account or OIDC token"}},
        "paths": paths,
        "definitions": {"Error": ERROR_SCHEMA},
    }
