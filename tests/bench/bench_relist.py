"""Benchmark of a watch cache store's re-list (issue #19): how long the event loop is held at
most while a store takes a full LIST's rows, in process, with rows made from the stand-in's pods
(tests/bench/standin.py). Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_relist [--pods 150000]

Cases: the first sync (an empty store), a re-list where 5,000 pods changed (the others' rows
reused, as the reflector's ``reusable`` gives them) and one where every pod changed; each timed
for ``Store.relist`` (executor threads, as the gateway runs it) and for ``Store.replace`` (all on
the loop, as before). The store has two sorted indexes and the status counters in use (as after
pages were asked for). The loop's longest hold is measured by a task that wakes every
millisecond and records how late it woke.
"""

import argparse
import asyncio
import concurrent.futures
import sys
import time

import msgspec

from dashboard_api.cache.watchcache import Cached
from dashboard_api.kinds import table as kinds
from tests.bench.standin import Pods

SPECS = [(("creationTimestamp", False),), (("status", True),)]


class Resource:
    group, plural, version, namespaced = "", "pods", "v1", True


def rows_of(cached, pods, indices, reuse=None):
    decode = msgspec.json.Decoder().decode
    rows = []
    for i in indices:
        obj = decode(pods.encode(i))
        row = reuse(obj) if reuse is not None else None
        rows.append(row if row is not None else cached.to_row(obj))
    return rows


async def held(step):
    """(the longest the loop was held while ``step()`` ran, its total time), in seconds."""
    worst = 0.0
    running = True

    async def ticker():
        nonlocal worst
        while running:
            before = time.perf_counter()
            await asyncio.sleep(0.001)
            worst = max(worst, time.perf_counter() - before - 0.001)

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0.01)
    started = time.perf_counter()
    await step()
    total = time.perf_counter() - started
    running = False
    await task
    return worst, total


def prepared(cached, rows):
    store = cached.store
    store.replace(rows, "1")
    for spec in SPECS:
        store.orders.get(spec)
    store.status_tally(())
    return store


async def measure(n, changed_count):
    pool = concurrent.futures.ThreadPoolExecutor(2)

    async def run(fn, *args):
        return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    pods = Pods(n)
    cached = Cached(kinds.get("pod"), Resource())
    results = []
    base = rows_of(cached, pods, range(n))
    for way in ("relist", "replace"):
        cached = Cached(kinds.get("pod"), Resource())
        store = cached.store
        if way == "relist":
            hold, total = await held(lambda: store.relist(base, "1", run))
        else:
            hold, total = await held(lambda: asyncio.sleep(0, store.replace(base, "1")))
        results.append(("first sync", way, hold, total))
    del cached
    for label, changed in (("%d changed" % changed_count, range(0, n, n // changed_count)),
                           ("all changed", range(n))):
        for way in ("relist", "replace"):
            pods = Pods(n)
            cached = Cached(kinds.get("pod"), Resource())
            store = prepared(cached, rows_of(cached, pods, range(n)))
            for i in changed:
                pods.change(i, 2)
            fresh = rows_of(cached, pods, range(n), store.reusable)
            if way == "relist":
                hold, total = await held(lambda: store.relist(fresh, "2", run))
            else:
                hold, total = await held(lambda: asyncio.sleep(0, store.replace(fresh, "2")))
            results.append((label, way, hold, total))
            del cached, store, fresh
    pool.shutdown()
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue #19: the loop held by a re-list")
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--changed", type=int, default=5000)
    args = parser.parse_args(argv)
    results = asyncio.run(measure(args.pods, args.changed))
    print("%d pods                 loop held max (ms)   total (ms)" % args.pods)
    for label, way, hold, total in results:
        print("%-14s %-8s %18.1f %12.1f" % (label, way, hold * 1000, total * 1000))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
