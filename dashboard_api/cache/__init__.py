"""The shared watch cache: one store per cached kind, filled by watches with the service's own
identity, read by every caller after the API server has authorized them (cache/access.py).

Secrets are never cached (their list goes to the API server with the caller's token), nor the
objects of custom resources; config maps are cached without their data (cache/slim.py).
"""

import asyncio
import logging

import tornado.httpclient

from dashboard_api import kinds
from dashboard_api.cache import slim
from dashboard_api.cache.applied import Applied
from dashboard_api.cache.store import SYNCED, SYNCING, UNAVAILABLE, Store, row_of
from dashboard_api.cluster.watch import Reflector
from dashboard_api.summaries.common import controller_uid

log = logging.getLogger("dashboard_api.cache")

NEVER_CACHED = frozenset(("secret",))


def _controller(obj):
    owner = controller_uid(obj)
    return (owner,) if owner else ()


def _node(obj):
    node = (obj.get("spec") or {}).get("nodeName")
    return (node,) if node else ()


def _involved(obj):
    uid = (obj.get("involvedObject") or {}).get("uid")
    return (uid,) if uid else ()


# Indexes the joins of summaries use: Related.by_controller, events_by_object, a node's pods.
INDEXES = {
    "pod": {"controller": _controller, "node": _node},
    "replicaset": {"controller": _controller},
    "job": {"controller": _controller},
    "event": {"involved": _involved},
}


class Cached:
    """One kind's store and the reflector that fills it."""

    def __init__(self, kind, resource, applied=None):
        self.kind = kind
        self.resource = resource
        self.store = Store(kind, INDEXES.get(kind.name))
        self.reflector = None
        self.applied = applied if applied is not None else Applied()

    def to_row(self, obj):
        return row_of(self.kind, slim.slim(self.resource.plural, obj))

    # The reflector's consumer interface.
    def replace(self, rows, version):
        self.store.replace(rows, version)
        self.applied.relisted(self.store)

    def apply(self, event, row, version):
        self.store.apply(event, row, version)
        self.applied.notify(event, row)   # read your own writes (cache/applied.py)

    def state(self, name):
        if name != self.store.state:
            log.info("cache of %s: %s (%d objects)", self.kind.name, name, len(self.store))
        self.store.set_state(name)


class WatchCache:
    """The process's stores, one per cached kind (``names``: kinds-table names, default all
    but secrets), each filled by its own reflector; ``store_for`` says which one may answer a
    resource now."""

    def __init__(self, cluster, names=None):
        self.cluster = cluster
        self.names = [k.name for k in kinds.TABLE if k.name not in NEVER_CACHED] \
            if names is None else [n for n in names if n not in NEVER_CACHED]
        self.cached = {}            # (group, plural) -> Cached
        self.by_name = {}           # kind name -> Cached
        self.registered = asyncio.Event()   # set once start() has made every kind's store
        self.applied = Applied()    # writes waiting for their watch events
        self._http = None

    async def start(self):
        """Resolves the kinds with the service identity and starts their watches."""
        self._http = tornado.httpclient.AsyncHTTPClient(
            force_instance=True, max_clients=len(self.names) + 4, max_body_size=1 << 62,
            max_buffer_size=1 << 27)
        try:
            await self._register()
        finally:
            self.registered.set()

    async def _register(self):
        handle = self.cluster.service_handle()
        for name in self.names:
            kind = kinds.get(name)
            try:
                resource = await self.cluster.discovery.resolve(handle, kind.group, kind.plural,
                                                                kind.versions)
            except Exception as exc:  # not served, or discovery refused: lists pass through
                log.info("not caching %s: %s", name, getattr(exc, "message", exc))
                continue
            cached = Cached(kind, resource, self.applied)
            cached.reflector = Reflector(self.cluster, resource, cached.to_row, cached,
                                         http=self._http)
            self.cached[(resource.group, resource.plural)] = cached
            self.by_name[name] = cached
            cached.reflector.start()

    def stop(self):
        for cached in self.cached.values():
            if cached.reflector is not None:
                cached.reflector.stop()
        if self._http is not None:
            self._http.close()

    def store_for(self, resource):
        """The store serving ``resource`` (same group, plural and version) now, or None: a
        synced store, or one that synced once and is re-listing (stale, still answering)."""
        store = self.store_of(resource)
        return store if store is not None and store.serving() else None

    def store_of(self, resource):
        """The store kept for ``resource`` whatever its state, or None."""
        cached = self.cached.get((resource.group, resource.plural))
        if cached is None or cached.resource.version != resource.version:
            return None
        return cached.store

    def synced_store(self, group, plural):
        """The store of (group, plural) in whatever version it is cached, while it answers lists
        (synced, or re-listing after a first sync), else None."""
        cached = self.cached.get((group, plural))
        return cached.store if cached is not None and cached.store.serving() else None

    def synced(self):
        """Whether no kind is still syncing (each is synced, or unavailable and passed
        through): what a readiness check asks."""
        return all(c.store.state != SYNCING for c in self.cached.values())

    def states(self):
        """{kind: (state, objects, events applied, watch restarts)} for /metrics."""
        return {name: (c.store.state, len(c.store), c.store.events,
                       c.reflector.restarts if c.reflector else 0)
                for name, c in self.by_name.items()}


__all__ = ["WatchCache", "SYNCED", "SYNCING", "UNAVAILABLE"]
