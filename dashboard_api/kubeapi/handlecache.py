"""--cache-enabled: one cluster client per token, bounded in count and expiring.

A client is keyed by a SHA-256 of the token and the impersonation headers, so two callers never
share one and the token itself is neither kept as a key nor printed. Clients live ``ttl`` seconds
from creation; the least recently used one goes first when ``size`` are held.

It saves nothing measurable: a client (kubeapi.client.Handle) holds no connection, only the
caller's headers (connections are pooled per process), so making one costs about 7 us while
finding a kept one costs about 30 us (the token's SHA-256 and the cache). It stays because the
specification names the flag.
"""

import logging
import time

import cachetools

from dashboard_api.kubeapi.client import Cluster
from dashboard_api.kubeapi.identity import identity_key as cache_key

log = logging.getLogger("dashboard_api.kubeapi.handlecache")


class LruTtlCache:
    """At most ``size`` values, each for ``ttl`` seconds from its creation, the least recently
    used dropped first (cachetools' TTLCache)."""

    def __init__(self, size, ttl, clock=time.monotonic):
        self.size = size
        self.ttl = ttl
        self._items = cachetools.TTLCache(size, ttl, timer=clock)

    def get_or_create(self, key, factory):
        found = self._items.get(key)
        if found is not None:
            return found
        value = self._items[key] = factory()
        log.debug("new cluster client for key %s…; %d cached", key[:12], len(self._items))
        return value

    def __len__(self):
        return len(self._items)


class CachingCluster(Cluster):
    """A Cluster whose handle() returns the cached client of a token."""

    def __init__(self, config, executor=None, size=1000, ttl=600.0, clock=time.monotonic,
                 **common):
        super().__init__(config, executor, **common)
        self.handles = LruTtlCache(size, ttl, clock)

    def handle(self, token, impersonation=None):
        return self.handles.get_or_create(
            cache_key(token, impersonation),
            lambda: Cluster.handle(self, token, impersonation))
