"""The watch cache as the list pipeline's source (listing's ``source`` seam).

A list is answered from the cache only when its kind is synced there, its selectors can be
evaluated exactly (cache/selectors.py) and the API server has said, for the caller's own token,
that they may list it in every namespace asked (cache/access.py). Anything else goes to the
pass-through source: the caller's own LIST calls. One object (a detail) is always read from the
API server with the caller's token.
"""

from dashboard_api import websettings
from dashboard_api.cache import selectors
from dashboard_api.cache.access import Disagreement
from dashboard_api.cache.store import SYNCED


class CacheSource:
    def __init__(self, cache, fallback, candidates=None):
        self.cache = cache
        self.fallback = fallback
        self.access = fallback.access
        self.candidates = candidates

    async def _authorized_store(self, fetch, resource, namespaces):
        """The store to answer from, after the caller's authorization; None: pass through."""
        store = self.cache.store_for(resource)
        if store is None:
            return None, ()
        names = namespaces.names if resource.namespaced else ()
        try:
            await self.access.require_list(fetch.handle, resource, names)
        except Disagreement:
            return None, ()
        return store, names

    async def list(self, fetch, resource, namespaces, labels=None, fields=None):
        match_labels, match_fields = selectors.labels(labels), selectors.fields(fields)
        if match_labels is None or match_fields is None:
            return await self.fallback.list(fetch, resource, namespaces, labels, fields)
        store, names = await self._authorized_store(fetch, resource, namespaces)
        if store is None:
            return await self.fallback.list(fetch, resource, namespaces, labels, fields)
        if not labels and not fields:
            return store.scope(names, objects=True)
        candidates = _narrowed(store, names, fields)
        if candidates is None:
            candidates = store.scope(names, objects=True)
        return [obj for obj in candidates
                if match_labels((obj.get("metadata") or {}).get("labels") or {})
                and match_fields(obj)]

    async def rows(self, fetch, kind, resource, namespaces):
        store, names = await self._authorized_store(fetch, resource, namespaces)
        if store is None:
            return await self.fallback.rows(fetch, kind, resource, namespaces)
        return store.scope(names)

    async def get(self, fetch, resource, namespace, name):
        return await self.fallback.get(fetch, resource, namespace, name)

    async def namespace_candidates(self, fetch):
        return await self.candidates(fetch) if self.candidates else []


def _narrowed(store, names, fields):
    """A node's pods from the node index instead of a scan of every pod."""
    if "node" not in store.indexes or not fields:
        return None
    for part in fields.split(","):
        key, _, value = part.partition("=")
        if key.strip() == "spec.nodeName" and not value.startswith("="):
            rows = store.indexes["node"].get(value.strip())
            wanted = set(names)
            return [r.obj for r in rows if not wanted or r.namespace in wanted]
    return None


class NamespaceCandidates:
    """Where "all namespaces" looks for a caller who may not list cluster-wide: the settings'
    namespaceFallbackList first, then the cluster's namespaces (from the cache, else listed
    with the service identity; in proxy mode only the fallback list)."""

    def __init__(self, cluster, settings, cache=None):
        self.cluster = cluster
        self.settings = settings
        self.cache = cache

    async def __call__(self, fetch):
        names = []
        if self.settings is not None:
            service = self.cluster.config.service_pool is not None
            handle = self.cluster.service_handle() if service else fetch.handle
            data = await self.settings.load(handle)
            settings = websettings.parse_settings(data.get(websettings.SETTINGS_KEY))
            names += [n for n in settings["namespaceFallbackList"] if n]
        names += [n for n in await self._cluster_namespaces() if n not in names]
        return names

    async def _cluster_namespaces(self):
        cached = self.cache.by_name.get("namespace") if self.cache else None
        if cached is not None and cached.store.state == SYNCED:
            return sorted(name for _ns, name in cached.store.rows)
        if self.cluster.config.service_pool is None:
            return []
        listed = await self.cluster.service_handle().get("/api/v1/namespaces")
        return sorted((o.get("metadata") or {}).get("name", "") for o in listed.get("items") or ())
