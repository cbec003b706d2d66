"""The watch cache's /metrics series with many clusters (cache/telemetry.py): every series of a
cluster's cache carries its ``cluster`` label, the authorization answers too; a cluster whose
cache is off, not started or let go has no cache series."""

import asyncio

from dashboard_api.cache.telemetry import CacheCollector
from dashboard_api.cache.store import SYNCED, SYNCING
from dashboard_api.cache.watchcache import Cached as RealCached, WatchCache
from dashboard_api.kinds import table as kinds


class Store:
    def staleness(self):
        return 1.5


class Reflector:
    silent = 2

    def quiet(self):
        return 0.25


class Cached:
    store, reflector = Store(), Reflector()


class Cache:
    def __init__(self, objects):
        self.objects = objects
        self.by_name = {"pod": Cached()} if objects else {}

    def states(self):
        return {"pod": ("synced", self.objects, 7, 1)} if self.objects else {}


class Access:
    def __init__(self, hits, misses, vouched=0):
        self.hits, self.misses, self.vouched = hits, misses, vouched


class Cluster:
    def __init__(self, name, cache, access):
        self.name, self.cache = name, cache
        self.source = type("Source", (), {"access": access})()


def samples(clusters):
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for metric in CacheCollector(clusters).collect() for s in metric.samples}


def test_every_series_is_labelled_with_its_cluster():
    got = samples([Cluster("a", Cache(3), Access(7, 1, 2)), Cluster("b", Cache(9), Access(0, 2)),
                   Cluster("idle", Cache(0), Access(0, 0)), Cluster("off", None, Access(4, 4))])
    assert got[("dashboard_cache_objects", (("cluster", "a"), ("kind", "pod")))] == 3
    assert got[("dashboard_cache_objects", (("cluster", "b"), ("kind", "pod")))] == 9
    assert got[("dashboard_cache_state", (("cluster", "b"), ("kind", "pod"),
                                          ("state", "synced")))] == 1
    assert got[("dashboard_cache_state", (("cluster", "b"), ("kind", "pod"),
                                          ("state", "syncing")))] == 0
    assert got[("dashboard_cache_events_applied", (("cluster", "a"), ("kind", "pod")))] == 7
    assert got[("dashboard_cache_watch_restarts", (("cluster", "a"), ("kind", "pod")))] == 1
    assert got[("dashboard_cache_stale_seconds", (("cluster", "a"), ("kind", "pod")))] == 1.5
    assert got[("dashboard_cache_watch_quiet_seconds", (("cluster", "a"), ("kind", "pod")))] \
        == 0.25
    assert got[("dashboard_cache_watch_silent", (("cluster", "b"), ("kind", "pod")))] == 2
    assert got[("dashboard_cache_authorization_checks", (("cluster", "a"),
                                                         ("result", "hit")))] == 5
    assert got[("dashboard_cache_authorization_checks", (("cluster", "a"),
                                                         ("result", "vouched")))] == 2
    assert got[("dashboard_cache_authorization_checks", (("cluster", "off"),
                                                         ("result", "miss")))] == 4
    # Every sample names its cluster; the idle and the cache-less ones have no cache series.
    assert all(dict(labels).get("cluster") for _name, labels in got)
    kinds_of = {dict(labels)["cluster"] for name, labels in got
                if name != "dashboard_cache_authorization_checks"}
    assert kinds_of == {"a", "b"}


def test_kinds_not_registered_yet_are_syncing():
    """The cache registers its kinds one by one: until the last is, /metrics must not show
    only the first ones, synced, as if they were the whole cache (a reader waiting for no
    kind to be syncing would go on while the config maps' watch is not even started)."""
    async def states():
        cache = WatchCache(None, names=["pod", "configmap"])
        assert cache.states() == {}   # not started: no kinds (a cluster not used yet)
        cache.started = True          # as start() does, before it registers each kind
        pod = cache.by_name["pod"] = RealCached(kinds.get("pod"), None)
        pod.store.replace([], "1")
        pod.store.set_state(SYNCED)
        during = cache.states()
        cache.registered.set()   # configmap not served, say: it is left out
        return during, cache.states()

    during, after = asyncio.run(states())
    assert during["pod"][0] == SYNCED and during["configmap"] == (SYNCING, 0, 0, 0)
    assert set(after) == {"pod"}
