"""--cache-enabled: one cluster client per token, bounded in count and expiring.

A client is keyed by a SHA-256 of the token and the impersonation headers, so two callers never
share one and the token itself is neither kept as a key nor printed. Clients live ``ttl`` seconds
from creation; the least recently used one goes first when ``size`` are held.
"""

import collections
import hashlib
import logging
import time

from dashboard_api.cluster.client import Cluster, impersonation_lines

log = logging.getLogger("dashboard_api.cluster.handlecache")


def cache_key(token, impersonation):
    """Equal for equal sets of impersonation lines, whatever their order (two groups are the
    same identity in either order); lines, not a dict, so that every group counts."""
    digest = hashlib.sha256(token.encode("utf-8"))
    for name, value in sorted((k.lower(), v) for k, v in impersonation_lines(impersonation)):
        digest.update(b"\0" + name.encode("utf-8") + b"\0" + value.encode("utf-8"))
    return digest.hexdigest()


class LruTtlCache:
    def __init__(self, size, ttl, clock=time.monotonic):
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._items = collections.OrderedDict()  # key -> (expiry, value)

    def get_or_create(self, key, factory):
        now = self._clock()
        found = self._items.get(key)
        if found is not None and found[0] > now:
            self._items.move_to_end(key)
            return found[1]
        value = factory()
        self._items[key] = (now + self.ttl, value)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        log.debug("new cluster client for key %s…; %d cached", key[:12], len(self._items))
        return value

    def __len__(self):
        return len(self._items)


class CachingCluster(Cluster):
    """A Cluster whose handle() returns the cached client of a token."""

    def __init__(self, config, executor=None, qps=0, burst=1, timeout=60.0, size=1000,
                 ttl=600.0, clock=time.monotonic):
        super().__init__(config, executor, qps=qps, burst=burst, timeout=timeout)
        self.handles = LruTtlCache(size, ttl, clock)

    def handle(self, token, impersonation=None):
        return self.handles.get_or_create(
            cache_key(token, impersonation),
            lambda: Cluster.handle(self, token, impersonation))
