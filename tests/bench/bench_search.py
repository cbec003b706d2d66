"""Benchmark of a search across kinds (issue #38) in process: ``GET /api/v1/search``'s work
(lists/search.py) over the watch cache's stores filled from the stand-in's composition
(tests/bench/standin.py ``--composition``: at 150,000 pods, 66,000 replica sets, 5,000 nodes,
200,000 events, 6,000 services and endpoint slices, 12,000 config maps). Not part of the test
suite.

    .venv/bin/python -m tests.bench.bench_search [--pods 150000] [--searches 40] [--profile]

No HTTP, no API server: the caller's rights and discovery are stubs that allow and resolve
everything, and the executor runs inline, so each figure is the search's own CPU, where it goes
and nothing else: per query (bench_scale's SEARCHES), p50/p90 back to back, with ``--churn``
pod changes applied between two searches (a status the query reads moves: the pods' store
changes under every search, as under the stand-in's churn); the first search of each apart (it
builds the filtered indexes later ones read); then each query narrowed to each kind
(``kind:``), p50 each. ``--profile`` prints cProfile's top functions of each query's searches.
bench_scale ``--search`` measures the same queries over HTTP, beside 64 clients.
"""

import argparse
import asyncio
import cProfile
import io
import json
import pstats
import sys
import time

from dashboard_api.cache import slim
from dashboard_api.cache.joined import join_stores
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import SYNCED, Store
from dashboard_api.kinds import table as kinds
from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists import search as searching
from dashboard_api.lists.cachesource import CacheSource
from dashboard_api.lists.fetch import Fetch
from dashboard_api.query import search
from tests.bench import standin
from tests.bench.bench_scale import SEARCHES

# The composition's kinds: (the stand-in's plural, the kind).
STORES = (("replicasets", "replicaset"), ("nodes", "node"), ("events", "event"),
          ("services", "service"), ("endpointslices", "endpointslice"),
          ("configmaps", "configmap"))


class Handle:
    token = "bench"
    impersonation = None


class Access:
    def known(self, handle, verb, resource, namespace="", name=None):
        return True

    async def allowed(self, handle, verb, resource, namespace="", name=None, budget=None):
        return True

    async def require_list(self, handle, resource, names):
        return None


class Passthrough:
    """Never asked for rows: the kinds not in a store are skipped, as not cached."""
    access = Access()


class Executor:
    async def run(self, fn, *args):
        return fn(*args)


class Discovery:
    async def resolve(self, handle, group, plural, versions):
        kind = kinds.of_resource(group, plural)
        return Resource(group, versions[0], plural, kind.name, kind.namespaced, ())


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
    """(the stand-in's state, {plural: Store}) of ``pods`` pods and the composition."""
    state = standin.State(pods, composed=True)
    parts = state.composition
    stores = {"pods": store_of("pod", (json.loads(state.pods.encode(i)) for i in range(pods)))}
    for plural, _name in STORES:
        count = parts.sizes[plural] if plural != "nodes" else parts.node_count
        stores[plural] = store_of(_name, (json.loads(parts.encode(plural, i))
                                          for i in range(count)))
    join_stores({name: stores[plural] for plural, name in (("pods", "pod"),) + STORES})
    return state, stores


def ms(samples, q):
    if not samples:
        return None
    return round(sorted(samples)[min(len(samples) - 1, int(q * len(samples)))] * 1000, 2)


class Churn:
    """Pod changes as the stand-in makes them (restarts up, the tier label and the second
    container's state flip), applied to the pods' store."""

    def __init__(self, state, store):
        self.state, self.store, self.kind = state, store, kinds.get("pod")
        self.next, self.version = 0, 10

    def apply(self, count):
        pods = self.state.pods
        for _ in range(count):
            i = (self.next * 7919) % pods.n
            self.next += 1
            self.version += 1
            pods.change(i, self.version)
            self.store.apply("MODIFIED", row_of(self.kind, slim.slim(
                self.kind, json.loads(pods.encode(i)))), str(self.version))


async def run(args):
    t0 = time.perf_counter()
    state, stores = filled(args.pods)
    built = time.perf_counter() - t0
    source = CacheSource(Cache(stores), Passthrough())
    churn = Churn(state, stores["pods"])
    churn.apply(args.pods // 10)   # a tenth of the pods crash-looping, as after minutes of churn

    async def once(text):
        fetch = Fetch(Handle(), Cluster(), source)
        started = time.perf_counter()
        answer = await searching.search(fetch, search.parse(text))
        return time.perf_counter() - started, answer

    result = {"pods": args.pods, "build_s": round(built, 1),
              "objects": {plural: len(store) for plural, store in stores.items()}}
    profiles = {}
    for name, text in SEARCHES.items():
        first, answer = await once(text)
        samples = []
        profile = cProfile.Profile() if args.profile else None
        for _ in range(args.searches):
            churn.apply(args.churn)
            if profile:
                profile.enable()
            seconds, answer = await once(text)
            if profile:
                profile.disable()
            samples.append(seconds)
        result[name] = {"query": text, "first_ms": round(first * 1000, 2),
                        "p50_ms": ms(samples, 0.5), "p90_ms": ms(samples, 0.9),
                        "matches": answer["listMeta"]["totalItems"],
                        "by_kind": {k["kind"]: k["totalItems"] for k in answer["kinds"]
                                    if k["totalItems"]}}
        per_kind = result[name]["per_kind_p50_ms"] = {}
        for plural, kind in (("pods", "pod"),) + STORES:
            narrowed = text + " kind:" + kind
            await once(narrowed)
            times = []
            for _ in range(max(3, args.searches // 4)):
                churn.apply(args.churn)
                times.append((await once(narrowed))[0])
            per_kind[kind] = ms(times, 0.5)
        if profile:
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(25)
            profiles[name] = out.getvalue()
    return result, profiles


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--searches", type=int, default=40)
    parser.add_argument("--churn", type=int, default=20,
                        help="pod changes applied before each search (200 a second at 10 "
                             "searches a second)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args(argv)
    result, profiles = asyncio.run(run(args))
    for name, text in profiles.items():
        print("=== %s\n%s" % (name, text), file=sys.stderr)
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(result, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
