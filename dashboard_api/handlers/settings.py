"""Global settings and pinned resources, kept in a ConfigMap as upstream's web module keeps them.

Reads use the service's own identity (as upstream does) so that the UI can start before sign-in;
in --proxy mode, where there is none, they use the caller's token when one is given and fall back
to the defaults otherwise. Writes always use the caller's token, so RBAC decides who may change
settings. Writes are made with the ConfigMap's resourceVersion as a precondition; a settings PUT
is also refused when the stored settings changed since this process last read them (the UI knows
the message and offers a reload), unless the change came through a gateway.

Replicas: every write also records a digest of what it wrote in an annotation of the ConfigMap
(``WRITTEN``), so that a change made through any replica counts as seen by all of them. Without
it, a user saving twice, once on each replica, would be told the second time that the settings
changed, by their own first save. Edits made around the gateways (kubectl) are still refused
until read.
"""

import hashlib

import logging

from dashboard_api import websettings
from dashboard_api.auth.bearer import bearer_token
from dashboard_api.serving.errors import ApiError, bad_request, from_apiserver, not_found
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.routes import COMMAND_BODY, Route

log = logging.getLogger("dashboard_api.settings")

CHANGED = "settings changed since last reload"
MERGE_PATCH = "application/merge-patch+json"
# Annotation of the ConfigMap: the SHA-256 of the text a gateway last wrote under a key.
WRITTEN = "dashboard-api/written-%s-sha256"


def digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def written_by_a_gateway(configmap, key, stored):
    """Whether `stored` (the text under `key`) is what a gateway, any replica, last wrote."""
    annotations = ((configmap or {}).get("metadata") or {}).get("annotations") or {}
    return stored is not None and annotations.get(WRITTEN % key) == digest(stored)


class SettingsStore:
    def __init__(self, cluster, namespace, name):
        self.cluster = cluster
        self.namespace = namespace
        self.name = name
        self._seen = {}  # key -> the stored text this process last read (None: absent)

    @property
    def path(self):
        return "/api/v1/namespaces/%s/configmaps/%s" % (self.namespace, self.name)

    def reader(self, handler):
        """Whose identity reads: the service's, or in proxy mode the caller's (None: nobody)."""
        if self.cluster.config.service_pool is not None:
            return self.cluster.service_handle()
        if bearer_token(handler.request.headers.get("Authorization")) is None:
            return None
        return handler.caller()

    async def _fetch(self, handle):
        """The ConfigMap, or None when it does not exist; other errors raise."""
        response = await handle.call("GET", self.path)
        if response.status == 404:
            return None
        if response.status >= 400:
            raise from_apiserver(response.status, response.data)
        return response.json()

    async def load(self, handle):
        """The stored data ({} when absent or unreadable); remembers what was seen."""
        if handle is None:
            return {}
        try:
            configmap = await self._fetch(handle)
        except ApiError as exc:
            log.warning("cannot read ConfigMap %s/%s: %s", self.namespace, self.name, exc.message)
            return {}
        data = (configmap or {}).get("data") or {}
        for key in (websettings.SETTINGS_KEY, websettings.PINNED_KEY):
            self._seen[key] = data.get(key)
        return data

    async def write(self, reader, writer, key, change):
        """Applies ``change(stored_text)`` -> new text (or None: nothing to do) to one key.

        ``reader`` reads the current ConfigMap, ``writer`` (the caller) creates or patches it.
        """
        configmap = await self._fetch(reader)
        data = (configmap or {}).get("data") or {}
        stored = data.get(key)
        if written_by_a_gateway(configmap, key, stored):
            self._seen[key] = stored  # written through another replica: seen by all of them
        text = change(stored)
        if text is None:
            return
        annotations = {WRITTEN % key: digest(text)}
        if configmap is None:
            body = {"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": self.name, "namespace": self.namespace,
                                 "annotations": annotations},
                    "data": {key: text}}
            await self._send(writer, "POST", self.path.rsplit("/", 1)[0], body, "application/json")
        else:
            patch = {"metadata": {"resourceVersion": configmap["metadata"]["resourceVersion"],
                                  "annotations": annotations},
                     "data": {key: text}}
            await self._send(writer, "PATCH", self.path, patch, MERGE_PATCH)
        self._seen[key] = text

    async def _send(self, handle, method, path, body, content_type):
        try:
            await handle.request(method, path, body=body, content_type=content_type)
        except ApiError as exc:
            if exc.code == 409:
                raise ApiError(409, CHANGED, "Conflict")
            raise

    def check_unchanged(self, key, stored):
        """Refuses a whole-object write over a change this process has not read yet."""
        if key in self._seen and self._seen[key] != stored:
            self._seen[key] = stored
            raise ApiError(409, CHANGED, "Conflict")


class _SettingsBase(BaseHandler):
    @property
    def store(self):
        return self.cluster.settings


class GlobalSettingsHandler(_SettingsBase):
    async def get(self):
        data = await self.store.load(self.store.reader(self))
        self.write_json(websettings.parse_settings(data.get(websettings.SETTINGS_KEY)))

    async def put(self):
        writer = self.caller()
        try:
            settings = websettings.validated(self.json_body())
        except websettings.SettingsError as exc:
            raise bad_request(str(exc))
        store = self.store

        def change(stored):
            store.check_unchanged(websettings.SETTINGS_KEY, stored)
            return websettings.dump(settings)

        await store.write(store.reader(self), writer, websettings.SETTINGS_KEY, change)
        self.set_status(204)
        self.finish()


class PinnedResourcesHandler(_SettingsBase):
    async def get(self):
        data = await self.store.load(self.store.reader(self))
        self.write_json(websettings.parse_pinned(data.get(websettings.PINNED_KEY)))

    async def put(self):
        writer = self.caller()
        try:
            item = websettings.pinned_resource(self.json_body())
        except websettings.SettingsError as exc:
            raise bad_request(str(exc))

        def change(stored):
            items = websettings.parse_pinned(stored)
            updated = websettings.pin(items, item)
            return None if updated is items else websettings.dump(updated)

        await self.store.write(self.store.reader(self), writer, websettings.PINNED_KEY, change)
        self.set_status(204)
        self.finish()


class PinnedResourceHandler(_SettingsBase):
    async def delete(self, kind, name, namespace=None):
        writer = self.caller()

        def change(stored):
            try:
                return websettings.dump(websettings.unpin(
                    websettings.parse_pinned(stored), kind, name, namespace))
            except LookupError as exc:
                raise not_found(str(exc))

        await self.store.write(self.store.reader(self), writer, websettings.PINNED_KEY, change)
        self.set_status(204)
        self.finish()


class SettingsCanIHandler(_SettingsBase):
    """May the caller read the settings ConfigMap? No or a bad token simply means no."""

    async def get(self):
        allowed = False
        if bearer_token(self.request.headers.get("Authorization")) is not None:
            try:
                allowed = await self.caller().can_i(
                    verb="get", resource="configmaps", namespace=self.store.namespace,
                    name=self.store.name)
            except ApiError:
                allowed = False  # a bad token or a failed review: not allowed
        self.write_json({"allowed": allowed})


_GLOBAL = "Global settings of the web UI (GET: service identity; PUT: caller's token, 204)"
_PINNED = "Pinned resources of the web UI (PUT adds one, 204)"

ROUTES = [
    Route("/api/v1/settings/global", GlobalSettingsHandler, "settings-global", auth=("put",),
          max_body=COMMAND_BODY, summary=_GLOBAL),
    Route("/settings", GlobalSettingsHandler, "settings", component="web", auth=("put",),
          max_body=COMMAND_BODY, summary=_GLOBAL),
    Route("/settings/pinnedresources", PinnedResourcesHandler, "settings-pinned",
          component="web", auth=("put",), max_body=COMMAND_BODY, summary=_PINNED),
    Route("/settings/pinnedresources/{kind}/{name}", PinnedResourceHandler,
          "settings-unpin", component="web",
          max_body=COMMAND_BODY,
          summary="Unpins a cluster-scoped resource (204; 404 when not pinned)"),
    Route("/settings/pinnedresources/{kind}/{namespace}/{name}", PinnedResourceHandler,
          "settings-unpin-namespaced", component="web",
          max_body=COMMAND_BODY, summary="Unpins a namespaced resource (204; 404 when not pinned)"),
    Route("/settings/cani", SettingsCanIHandler, "settings-cani", component="web", auth=False,
          max_body=COMMAND_BODY, summary="Whether the caller may read the settings ConfigMap"),
    Route("/settings/pinnedresources/cani", SettingsCanIHandler, "settings-pinned-cani",
          component="web", auth=False,
          max_body=COMMAND_BODY, summary="Whether the caller may read the settings ConfigMap"),
]
