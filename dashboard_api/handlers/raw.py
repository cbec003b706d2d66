"""Raw access to any object: /api/v1/_raw/{kind}[/namespace/{namespace}]/name/{name}.

GET returns the object exactly as the API server does. PUT takes the whole object as the user
edited it: it is created when missing, else the difference against the live object is patched
(dashboard_api/writes/patches.py), read again and re-diffed on a conflict. DELETE takes
``propagation`` (Background, Foreground, Orphan; Foreground when absent, as upstream) and
``deleteNow`` (a one-second grace period, as ``kubectl delete --now``). PUT and DELETE answer
204 with no body. Like every write, they run with the caller's token only.
"""

from dashboard_api.audit import targets as audit_targets
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.errors import ApiError, bad_request, from_apiserver
from dashboard_api.serving.routes import Route
from dashboard_api.writes import patches, targets
from dashboard_api.writes.updates import patch_retrying

PROPAGATION = ("Background", "Foreground", "Orphan")


def checked_object(obj, resource, namespace, name):
    """The submitted object, refused (400) when it names another kind, group, name or
    namespace than the path; a missing name or namespace is taken from the path."""
    if not isinstance(obj, dict):
        raise bad_request("the body must be a whole object (a JSON object)")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise bad_request("the object needs apiVersion and kind strings")
    if kind != resource.kind or api_version.rpartition("/")[0] != resource.group:
        raise bad_request("the body is a %s of %s but the path names a %s of %s" % (
            kind, api_version, resource.kind, resource.api_version))
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise bad_request("metadata must be an object")
    if meta.setdefault("name", name) != name:
        raise bad_request("the body names %r but the path names %r" % (meta["name"], name))
    if resource.namespaced:
        if meta.setdefault("namespace", namespace) != namespace:
            raise bad_request("the body's namespace %r is not the path's namespace %r"
                              % (meta["namespace"], namespace))
    elif meta.get("namespace"):
        raise bad_request("%s is not namespaced but the body names namespace %r"
                          % (resource.kind, meta["namespace"]))
    return obj


class RawHandler(BaseHandler):
    async def target(self, kind, namespace, name):
        handle = self.caller()
        resource = await targets.resolve(self.cluster.api, handle, kind)
        self.audit_targets = [audit_targets.of_resource(resource, namespace, name)]
        targets.check_scope(resource, namespace, kind)
        return handle, resource, resource.path(namespace, name)

    async def get(self, kind, name, namespace=None):
        handle, _, path = await self.target(kind, namespace, name)
        response = await handle.call("GET", path)
        if response.status >= 400:
            raise from_apiserver(response.status, response.data)
        self.finish(response.data)

    async def put(self, kind, name, namespace=None):
        handle, resource, path = await self.target(kind, namespace, name)
        obj = checked_object(self.json_body(), resource, namespace, name)
        # The body's own version of the group, which the server must serve.
        try:
            resource = await self.cluster.api.discovery.by_kind(handle, obj["apiVersion"],
                                                                obj["kind"])
        except ApiError as exc:
            if exc.code != 404:
                raise
            raise bad_request("the server does not serve %s in %s" % (obj["kind"],
                                                                      obj["apiVersion"]))
        path = resource.path(namespace, name)
        patched = await patch_retrying(handle, path, lambda live: patches.edit_patch(live, obj))
        if patched is None:
            obj["metadata"].pop("resourceVersion", None)
            await handle.request("POST", resource.path(namespace), body=obj)
        self.set_status(204)
        self.finish()

    async def delete(self, kind, name, namespace=None):
        propagation = self.get_query_argument("propagation", None) or "Foreground"
        if propagation not in PROPAGATION:
            raise bad_request("propagation must be one of %s, got %r"
                              % (", ".join(PROPAGATION), propagation))
        now = self.bool_arg("deleteNow")
        handle, _, path = await self.target(kind, namespace, name)
        options = {"kind": "DeleteOptions", "apiVersion": "v1",
                   "propagationPolicy": propagation}
        if now:
            options["gracePeriodSeconds"] = 1
        await handle.request("DELETE", path, body=options)
        self.set_status(204)
        self.finish()


_RAW = "/api/v1/_raw/{kind}"
ROUTES = [
    Route(_RAW + "/namespace/{namespace}/name/{name}", RawHandler, "raw-namespaced",
          summary="A namespaced object as the API server has it (GET), created or updated from "
                  "the whole object (PUT, 204), deleted (DELETE ?propagation&deleteNow, 204)"),
    Route(_RAW + "/name/{name}", RawHandler, "raw-cluster",
          summary="A cluster-scoped object: GET, PUT (create or update, 204), DELETE (204)"),
]
