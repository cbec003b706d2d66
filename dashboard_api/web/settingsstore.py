"""Global settings and pinned resources, kept in a ConfigMap as upstream's web module keeps them.

Writes are made with the ConfigMap's resourceVersion as a precondition; a settings write is
also refused when the stored settings changed since this process last read them (the UI knows
the message and offers a reload), unless the change came through a gateway.

Replicas: every write also records a digest of what it wrote in an annotation of the ConfigMap
(``WRITTEN``), so that a change made through any replica counts as seen by all of them. Without
it, a user saving twice, once on each replica, would be told the second time that the settings
changed, by their own first save. Edits made around the gateways (kubectl) are still refused
until read. Whose identity reads and writes is the handlers' choice (handlers/settings.py).
"""

import hashlib
import logging

from dashboard_api.serving.errors import ApiError, from_apiserver
from dashboard_api.web import settings as websettings

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
