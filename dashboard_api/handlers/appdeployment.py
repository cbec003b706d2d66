"""Application deployment: from the form, from a file, the validators and the protocols.

``POST /api/v1/appdeployment`` creates the form's Deployment, then its Service (no rollback
if the service fails, as upstream; the error says the deployment was created).
``POST /api/v1/appdeploymentfromfile`` creates the file's documents in order, each resolved by
its apiVersion and kind through discovery; it stops at the first failure and says which
document failed, why, and which were created before it. The three validators are exempt from
CSRF; ``validate/name`` needs a token (it reads with the caller's rights).
"""

from dashboard_api.audit import targets as audit_targets
from dashboard_api.audit.entry import Target
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.kubeapi.discovery import segment
from dashboard_api.serving import bounded
from dashboard_api.serving.errors import ApiError, bad_request, from_apiserver
from dashboard_api.serving.routes import COMMAND_BODY, Route
from dashboard_api.writes import appdeploy


def _object(handler):
    body = handler.json_body()
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object")
    return body


class AppDeploymentHandler(BaseHandler):
    async def post(self):
        handle = self.caller()
        spec = _object(self)
        namespace, deployment, service = appdeploy.app_objects(spec)
        discovery = self.cluster.api.discovery
        deployments = await discovery.resolve(handle, "apps", "deployments", ("v1",))
        deployment["apiVersion"] = deployments.api_version
        self.audit_targets = [Target("deployment", "apps", "deployments", namespace,
                                     deployment["metadata"]["name"])]
        await handle.request("POST", deployments.path(namespace), body=deployment)
        created = ["Deployment %s/%s" % (namespace, deployment["metadata"]["name"])]
        if service is not None:
            self.audit_targets.append(Target("service", "", "services", namespace,
                                             service["metadata"]["name"]))
            try:
                await handle.request("POST", "/api/v1/namespaces/%s/services" % namespace,
                                     body=service)
            except ApiError as exc:
                raise ApiError(exc.code, "deployment %s/%s was created, but its service was "
                               "not: %s" % (namespace, service["metadata"]["name"],
                                            exc.message), exc.reason,
                               {"created": created})
        self.write_json(spec, 201)


class FromFileHandler(BaseHandler):
    async def post(self):
        handle = self.caller()
        body = _object(self)
        namespace = body.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise bad_request("namespace must be a string")
        content = body.get("content")
        docs = await bounded.run(appdeploy.documents, content) \
            if isinstance(content, str) and len(content) > bounded.OFF_LOOP_BYTES \
            else appdeploy.documents(content)
        discovery = self.cluster.api.discovery
        created = []
        self.audit_targets = []
        for index, doc in docs:
            what = "document %d (%s)" % (index, appdeploy.describe(doc))
            try:
                try:
                    resource = await discovery.by_kind(handle, doc["apiVersion"], doc["kind"])
                except ApiError as exc:
                    if exc.code != 404:
                        raise
                    raise bad_request("unknown resource kind: %s" % doc["kind"])
                target = None
                if resource.namespaced:
                    target = namespace or None
                    if target == appdeploy.NAMESPACE_ALL or target is None:
                        target = (doc.get("metadata") or {}).get("namespace")
                    if not target:
                        raise bad_request("no namespace for a namespaced object")
                self.audit_targets.append(audit_targets.of_resource(
                    resource, target or "", str((doc.get("metadata") or {}).get("name") or "")))
                made = await handle.request("POST", resource.path(target), body=doc)
            except ApiError as exc:
                message = "%s failed: %s" % (what, exc.message)
                message += ("; created before it: " + ", ".join(created)) if created else \
                    "; nothing was created"
                raise ApiError(exc.code, message, exc.reason,
                               {"failedDocument": index, "created": created})
            created.append(appdeploy.describe(made or doc, target))
        self.write_json({"name": body.get("name", ""), "content": body["content"],
                         "error": ""}, 201)


class ValidateNameHandler(BaseHandler):
    """Valid when neither a deployment nor a service of that name is visible (404 or 403)."""

    async def post(self):
        handle = self.caller()
        body = _object(self)
        name, namespace = body.get("name"), body.get("namespace")
        if not isinstance(name, str) or not name or not isinstance(namespace, str) or \
                not namespace:
            raise bad_request("name and namespace are required strings")
        deployments = await self.cluster.api.discovery.resolve(handle, "apps", "deployments",
                                                               ("v1",))
        valid = True
        for path in (deployments.path(namespace, name),
                     "/api/v1/namespaces/%s/services/%s" % (segment(namespace), segment(name))):
            response = await handle.call("GET", path)
            if response.status in (403, 404):
                continue
            if response.status >= 400:
                raise from_apiserver(response.status, response.data)
            valid = False
        self.write_json({"valid": valid})


class ValidateImageHandler(BaseHandler):
    async def post(self):
        reference = _object(self).get("reference", "")
        if not isinstance(reference, str):
            raise bad_request("reference must be a string")
        problem = appdeploy.image_reference_problem(reference)
        self.write_json({"valid": not problem, "reason": problem})


class ValidateProtocolHandler(BaseHandler):
    async def post(self):
        body = _object(self)
        protocol, external = body.get("protocol"), body.get("isExternal", False)
        if not isinstance(protocol, str) or not isinstance(external, bool):
            raise bad_request("protocol (a string) and isExternal (a boolean) are required")
        self.write_json({"valid": appdeploy.protocol_valid(protocol, external)})


class ProtocolsHandler(BaseHandler):
    def get(self):
        self.write_json({"protocols": list(appdeploy.PROTOCOLS)})


_APP = "/api/v1/appdeployment"
ROUTES = [
    Route(_APP, AppDeploymentHandler, "appdeployment",
          summary="Deploys an application from the form: a deployment and an optional "
                  "service (201, the form)"),
    Route("/api/v1/appdeploymentfromfile", FromFileHandler, "appdeploymentfromfile",
          summary="Creates the objects of YAML or JSON documents {name, namespace, content} "
                  "(201)"),
    Route(_APP + "/validate/name", ValidateNameHandler, "validate-name", csrf=False, audit=False,
          max_body=COMMAND_BODY,
          summary="Whether no deployment or service has the name yet {valid}"),
    Route(_APP + "/validate/imagereference", ValidateImageHandler, "validate-image",
          csrf=False, auth=False, audit=False, max_body=COMMAND_BODY,
          summary="Whether an image reference parses {valid, reason}"),
    Route(_APP + "/validate/protocol", ValidateProtocolHandler, "validate-protocol",
          csrf=False, auth=False, audit=False, max_body=COMMAND_BODY,
          summary="Whether a protocol suits the service type {valid}"),
    Route(_APP + "/protocols", ProtocolsHandler, "appdeployment-protocols", auth=False,
          summary="Protocols a service port may use {protocols}"),
]
