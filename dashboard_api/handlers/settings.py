"""Global settings and pinned resources, kept in a ConfigMap as upstream's web module keeps them.

Reads use the service's own identity (as upstream does) so that the UI can start before sign-in;
in --proxy mode, where there is none, they use the caller's token when one is given and fall back
to the defaults otherwise. Writes always use the caller's token, so RBAC decides who may change
settings. Writes are kept by web/settingsstore.py (preconditions, and the replicas' digests).
"""

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.bearer import bearer_token
from dashboard_api.serving.errors import ApiError, bad_request, not_found
from dashboard_api.serving.routes import COMMAND_BODY, Route
from dashboard_api.web import settings as websettings


def reader(store, handler):
    """Whose identity reads: the service's, or in proxy mode the caller's (None: nobody)."""
    if store.cluster.config.service_pool is not None:
        return store.cluster.service_handle()
    if bearer_token(handler.request.headers.get("Authorization")) is None:
        return None
    return handler.caller()


class _SettingsBase(BaseHandler):
    @property
    def store(self):
        return self.cluster.settings


class GlobalSettingsHandler(_SettingsBase):
    async def get(self):
        data = await self.store.load(reader(self.store, self))
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

        await store.write(reader(store, self), writer, websettings.SETTINGS_KEY, change)
        self.set_status(204)
        self.finish()


class PinnedResourcesHandler(_SettingsBase):
    async def get(self):
        data = await self.store.load(reader(self.store, self))
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

        await self.store.write(reader(self.store, self), writer, websettings.PINNED_KEY, change)
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

        await self.store.write(reader(self.store, self), writer, websettings.PINNED_KEY, change)
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
