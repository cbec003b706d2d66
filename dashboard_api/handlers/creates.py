"""POST /api/v1/namespace {name} and POST /api/v1/secret {name, namespace, data}.

They share their paths with the namespace and secret lists (routes.merged). The secret is an
image-pull secret: ``data`` is the base64 of a ``.dockercfg`` file (reference §8.10); the reply
is the secret list item built from the request, as upstream.
"""

import base64
import binascii

from dashboard_api.audit.entry import Target
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.errors import bad_request
from dashboard_api.serving.routes import COMMAND_BODY, Route
from dashboard_api.writes import names

DOCKERCFG = "kubernetes.io/dockercfg"


def object_body(handler):
    body = handler.json_body()
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    return body


class NamespaceCreateHandler(BaseHandler):
    async def post(self):
        handle = self.caller()
        name = names.dns_label("name", object_body(self).get("name"))
        self.audit_targets = [Target("namespace", "", "namespaces", "", name)]
        await handle.request("POST", "/api/v1/namespaces", body={
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self.write_json({"name": name}, 201)


class SecretCreateHandler(BaseHandler):
    async def post(self):
        handle = self.caller()
        body = object_body(self)
        name = names.dns_subdomain("name", body.get("name"))
        namespace = names.dns_label("namespace", body.get("namespace"))
        self.audit_targets = [Target("secret", "", "secrets", namespace, name)]
        data = body.get("data")
        if not isinstance(data, str) or not data:
            raise bad_request("data (the base64 of a .dockercfg file) is required")
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise bad_request("data is not valid base64")
        await handle.request("POST", "/api/v1/namespaces/%s/secrets" % namespace, body={
            "apiVersion": "v1", "kind": "Secret", "type": DOCKERCFG,
            "metadata": {"name": name, "namespace": namespace},
            "data": {".dockercfg": base64.b64encode(raw).decode()}})
        self.write_json({"objectMeta": {"name": name, "namespace": namespace,
                                        "creationTimestamp": None},
                         "typeMeta": {"kind": "secret"}, "type": DOCKERCFG}, 201)


ROUTES = [
    Route("/api/v1/namespace", NamespaceCreateHandler, "namespace-create", max_body=COMMAND_BODY,
          summary='Creates a namespace from {"name"} (201)'),
    Route("/api/v1/secret", SecretCreateHandler, "secret-create",
          summary="Creates an image-pull secret from {name, namespace, data: base64 of a "
                  ".dockercfg} (201)"),
]
