"""Benchmark of the watch cache's field indexes (issue #30, item 3), in process, with the
stand-in's composition (tests/bench/composition.py): an object's events sublist
(``involvedObject.name=x,involvedObject.kind=Pod`` in its namespace) and a node's events
(``involvedObject.kind=Node,involvedObject.name=n`` in every namespace) answered by a walk of
the namespaces (before) and by the "named" index (cache/fieldindex.py); what the index costs in
memory a row, beside buckets by value (store.Index) of the same field; what an event costs the
store with and without it; the same for the pods' node index. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_field_index [--pods 150000]
"""

import argparse
import gc
import random
import statistics
import time
import tracemalloc

import msgspec

from dashboard_api.cache.indexes import Index
from dashboard_api.cache.rows import bucket_key
from dashboard_api.cache.store import Store
from dashboard_api.cache.watchcache import Cached
from dashboard_api.kinds import table as kinds
from dashboard_api.lists.cachesource import _narrowed
from dashboard_api.query import selectors
from dashboard_api.query.fields import Field
from tests.bench.composition import Composition
from tests.bench.standin import Pods


class Resource:
    group, version, namespaced = "", "v1", True

    def __init__(self, plural):
        self.plural = plural


def rows(kind, encode, indices):
    cached = Cached(kinds.get(kind), Resource(kind + "s"))
    decode = msgspec.json.Decoder().decode
    return [cached.to_row(decode(encode(i))) for i in indices]


def held(make):
    """(what ``make()`` returns, the bytes it holds: traced allocations still alive)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    made = make()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return made, after - before


def p50_ms(fn, args):
    times = []
    for arg in args:
        start = time.perf_counter()
        fn(*arg)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def walked(store, names, fields):
    match = selectors.fields(fields)
    return [o for o in store.scope(names, objects=True) if match(o)]


def narrowed(store, names, fields):
    match = selectors.fields(fields)
    return [o for o in _narrowed(store, names, fields) if match(o)]


def index_bytes(field, all_rows):
    """(bytes of the field's FieldIndex, bytes of buckets by its value) over ``all_rows``."""
    store = Store(None, {"field": field})
    _lists, sorted_bytes = held(lambda: store.indexes["field"].state_of(all_rows))
    keys = [bucket_key(row) for row in all_rows]
    _buckets, bucket_bytes = held(lambda: Index(field).state_of(all_rows, keys))
    return sorted_bytes, bucket_bytes


def change_us(kind, all_rows, churn, without, rounds=3):
    """Microseconds an ADDED and a DELETED cost the store, with its indexes and without
    ``without``: the best of ``rounds`` alternated (the machine is shared)."""
    stores = []
    for indexes in (kind.indexes, {k: v for k, v in kind.indexes.items() if k != without}):
        stores.append(Store(kind, indexes))
        stores[-1].replace(all_rows, "1")
    out = [float("inf")] * len(stores)
    for _ in range(rounds):
        for i, store in enumerate(stores):
            start = time.perf_counter()
            for row in churn:
                store.apply("ADDED", row, "2")
                store.apply("DELETED", row, "3")
            out[i] = min(out[i], (time.perf_counter() - start) * 1e6 / len(churn))
    return out


def measure(n, samples):
    pods = Pods(n)
    composition = Composition(pods, 0)
    count = composition.sizes["events"]
    event = kinds.get("event")
    events = rows("event", lambda k: composition.encode("events", k), range(count))
    store = Store(event, event.indexes)
    store.replace(events, "1")
    rng = random.Random(7)
    picked = [events[rng.randrange(count)].obj for _ in range(samples)]
    sublists = [(store, (o["metadata"]["namespace"],),
                 "involvedObject.name=%s,involvedObject.kind=Pod" % o["involvedObject"]["name"])
                for o in picked]
    nodes = [(store, (), "involvedObject.kind=Node,involvedObject.name=node-%d" % k)
             for k in range(samples)]
    for args in sublists[:20]:
        assert walked(*args) == narrowed(*args) and walked(*args)
    store.scope(sublists[0][1], objects=True)   # made once, as between two events

    def after_event(fn):   # each read after an event: the namespace's scope list made again
        def read(*args):
            store._changed()
            return fn(*args)
        return read

    result = {"events": count, "namespaces": len(store.names),
              "sublist walk ms": p50_ms(walked, sublists),
              "sublist walk after an event ms": p50_ms(after_event(walked), sublists),
              "sublist index ms": p50_ms(narrowed, sublists),
              "node events walk ms": p50_ms(walked, nodes[:20]),
              "node events index ms": p50_ms(narrowed, nodes)}
    named, buckets = index_bytes(event.indexes["named"], events)
    result["named index bytes/event"] = named / count
    result["as buckets bytes/event"] = buckets / count
    composition.event_rv.extend([1] * samples)   # events not yet arrived
    churn = rows("event", lambda k: composition.encode("events", k),
                 range(count, count + samples))
    result["event change us (with, without)"] = change_us(event, events, churn, "named")
    del store, events, churn
    pod = kinds.get("pod")
    all_pods = rows("pod", pods.encode, range(n))
    named, buckets = index_bytes(Field("spec.nodeName"), all_pods)
    result["pods"] = n
    result["node index bytes/pod"] = named / n
    result["node as buckets bytes/pod"] = buckets / n
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue #30: field indexes of the cache")
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args(argv)
    for key, value in measure(args.pods, args.samples).items():
        if isinstance(value, float):
            value = "%.3f" % value
        elif isinstance(value, list):
            value = ", ".join("%.1f" % v for v in value)
        print("%-36s %s" % (key, value))


if __name__ == "__main__":
    main()
