"""Once every kind has synced, the watch cache builds each large store's sorted index for the web
UI's first page (newest first) in the executor, before anyone asks: not before the last kind
has synced (it would slow the first sync), not for small stores (built on the loop when asked,
in microseconds)."""

import asyncio
import json

from dashboard_api.cache import slim
from dashboard_api.cache.orders import OFF_LOOP_BUILD
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.watchcache import FIRST_PAGE_SORT, SYNCED, UNAVAILABLE, Cached, WatchCache
from dashboard_api.kinds import table as kinds
from tests.bench.standin import Pods


class Executor:
    def __init__(self):
        self.calls = 0

    async def run(self, fn, *args):
        self.calls += 1
        return fn(*args)


class Cluster:
    def __init__(self):
        self.executor = Executor()


def _cache(cluster, stores):
    cache = WatchCache(cluster, names=list(stores))
    cache.started = True
    for name, rows in stores.items():
        cached = Cached(kinds.get(name), None)
        cached.on_synced = cache._synced
        cached.store.replace(rows, "1")
        cache.by_name[name] = cache.cached[(cached.kind.group, cached.kind.plural)] = cached
    return cache


def _pods(n):
    kind, pods = kinds.get("pod"), Pods(n)
    return [row_of(kind, slim.slim(kind, json.loads(pods.encode(i)))) for i in range(n)]


def test_the_first_pages_index_is_built_once_every_kind_has_synced():
    async def scenario():
        cluster = Cluster()
        cache = _cache(cluster, {"pod": _pods(OFF_LOOP_BUILD), "configmap": [],
                                 "node": []})
        cache.registered.set()
        pod, configmap, node = (cache.by_name[n] for n in ("pod", "configmap", "node"))
        pod.state(SYNCED)
        configmap.state(SYNCED)
        assert cache.warming is None             # nodes still syncing: nothing built yet
        node.state(UNAVAILABLE)                  # passed through: counts as done
        assert cache.warming is not None
        await cache.warming
        index = pod.store.orders.sorted.get(FIRST_PAGE_SORT)
        assert index is not None and cluster.executor.calls == 1
        assert pod.store.orders.get(FIRST_PAGE_SORT) is index   # the page reads it as is
        newest = max(pod.store.rows.values(),
                     key=lambda r: (r.obj["metadata"]["creationTimestamp"]))
        assert next(iter(index.page((), 0, 1))).obj["metadata"]["creationTimestamp"] == \
            newest.obj["metadata"]["creationTimestamp"]
        assert FIRST_PAGE_SORT not in configmap.store.orders.sorted   # small: built when asked
        pod.state(SYNCED)                        # a watch resumed: not built again
        await asyncio.sleep(0)
        assert cluster.executor.calls == 1
        cache.stop()

    asyncio.run(scenario())


def test_a_cache_whose_kinds_all_synced_before_registering_ended_still_warms():
    async def scenario():
        cluster = Cluster()
        cache = _cache(cluster, {"pod": _pods(OFF_LOOP_BUILD)})
        cache.by_name["pod"].state(SYNCED)
        assert cache.warming is None             # registering not done yet
        cache.registered.set()
        cache._synced()                          # as start() does once registered
        await cache.warming
        assert FIRST_PAGE_SORT in cache.by_name["pod"].store.orders.sorted

    asyncio.run(scenario())
