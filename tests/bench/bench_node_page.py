"""Benchmark of the node list page (issue #30) in process: the list pipeline over the watch
cache's pod and node stores filled from the stand-in's composition (tests/bench/standin.py,
``--composition``: 5,000 nodes and 30 pods a node at 150,000 pods). Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_node_page [--pods 150000] [--pages 300]

No HTTP, no API server: the caller's rights and discovery are stubs that allow and resolve
everything, so the figure is the page's own cost (``Pipeline.list_kind``: the node page of 10
and its nodes' allocated resources). Measured back to back, the first page of nodes (p50, p90),
and that page again after each of its nodes' pods changed (a pod event on each: the sums kept per
event, cache/summed.py). ``--json`` writes the page's answer, to compare builds byte for byte.
"""

import argparse
import asyncio
import json
import sys
import time

from dashboard_api.cache import slim
from dashboard_api.cache.joined import join_stores
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import SYNCED, Store
from dashboard_api.kinds import table as kinds
from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists.cachesource import CacheSource
from dashboard_api.lists.fetch import Fetch
from dashboard_api.lists.pipeline import Pipeline
from dashboard_api.query.listquery import Query
from dashboard_api.query.reads import ALL
from tests.bench import standin

PAGE = Query(items_per_page=10, page=1)
RESOURCES = {("", "pods"): Resource("", "v1", "pods", "Pod", True, ()),
             ("", "nodes"): Resource("", "v1", "nodes", "Node", False, ())}


class Handle:
    token = "bench"
    impersonation = None


class Access:
    def known(self, handle, verb, resource, namespace="", name=None):
        return True

    async def require_list(self, handle, resource, names):
        return None


class Passthrough:
    """Never asked: every kind read here is cached and the caller may list it."""
    access = Access()


class Executor:
    async def run(self, fn, *args):
        return fn(*args)


class Discovery:
    async def resolve(self, handle, group, plural, versions):
        return RESOURCES[(group, plural)]


class Cluster:
    executor = Executor()
    discovery = Discovery()
    writes = 0


class Cache:
    def __init__(self, stores):
        self.registered = asyncio.Event()
        self.registered.set()
        self.stores = stores

    def store_of(self, resource):
        return self.stores.get(resource.plural)


def store_of(name, objects):
    kind = kinds.get(name)
    store = Store(kind, kind.indexes)
    store.replace([row_of(kind, slim.slim(kind, obj)) for obj in objects], "1")
    store.set_state(SYNCED)
    return store


def filled(pods):
    """(the stand-in's state, {plural: Store}) of ``pods`` pods and the composition's nodes."""
    state = standin.State(pods, composed=True)
    nodes = state.composition.node_count
    stores = {"pods": store_of("pod", (json.loads(state.pods.encode(i)) for i in range(pods))),
              "nodes": store_of("node", (json.loads(state.composition.encode("nodes", k))
                                         for k in range(nodes)))}
    join_stores({"pod": stores["pods"], "node": stores["nodes"]})
    return state, stores


def ms(samples, q):
    return round(sorted(samples)[min(len(samples) - 1, int(q * len(samples)))] * 1000, 3)


async def run(args):
    t0 = time.perf_counter()
    state, stores = filled(args.pods)
    built = time.perf_counter() - t0
    pipeline = Pipeline(CacheSource(Cache(stores), Passthrough()))
    kind = kinds.get("node")

    async def page():
        fetch = Fetch(Handle(), Cluster(), pipeline.source)
        started = time.perf_counter()
        answer = await pipeline.list_kind(fetch, kind, ALL, PAGE)
        return time.perf_counter() - started, answer

    _seconds, first = await page()
    samples = [(await page())[0] for _ in range(args.pages)]
    # a pod of each of the page's nodes changes before each page
    pods_of = {item["objectMeta"]["name"]: [] for item in first["nodes"]}
    for i in range(args.pods):
        pods_of.get(state.pods.node_of(i), []).append(i)
    pod_kind, pod_store = kinds.get("pod"), stores["pods"]
    changed = []
    for n in range(min(args.pages, 100)):
        for i in (on_node[n % len(on_node)] for on_node in pods_of.values() if on_node):
            state.pods.change(i, 2000 + n)
            pod_store.apply("MODIFIED", row_of(pod_kind, slim.slim(
                pod_kind, json.loads(state.pods.encode(i)))), str(2000 + n))
        changed.append((await page())[0])
    return {"pods": args.pods, "nodes": len(stores["nodes"]), "build_s": round(built, 1),
            "page_p50_ms": ms(samples, 0.5), "page_p90_ms": ms(samples, 0.9),
            "after_pod_changes_p50_ms": ms(changed, 0.5)}, first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--json", help="write the first page's answer here")
    args = parser.parse_args(argv)
    result, first = asyncio.run(run(args))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(first, out, sort_keys=True)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
