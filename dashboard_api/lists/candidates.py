"""Where "all namespaces" looks for a caller who may not list a kind cluster-wide."""

from dashboard_api.web import settings as websettings


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
        if cached is not None and cached.store.serving():
            return sorted(name for _ns, name in cached.store.rows)
        if self.cluster.config.service_pool is None:
            return []
        listed = await self.cluster.service_handle().get("/api/v1/namespaces")
        return sorted((o.get("metadata") or {}).get("name", "") for o in listed.get("items") or ())
