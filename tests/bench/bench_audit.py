"""What an audited write costs beside an unaudited one (issue #39). Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_audit [--writes 400] [--postgres]

Starts a local cluster (one node; or uses ``--kubeconfig`` and ``--token`` of one running) and
gateways on loopback that differ only in ``--audit-db``: ``none`` (the entry goes to the log
only: the unaudited write), a SQLite file (the default), and with ``--postgres`` a PostgreSQL
server of its own (tests/support/postgres.py). Each write is a scale of one deployment
(``PUT /api/v1/scale/deployment/{ns}/bench?scaleBy=n``, n going 1, 2, 1, ...) with the
cluster's admin token, timed from the request to the last byte of its answer (which, through
the watch cache, comes once the cache shows the change: cache/applied.py). The gateways take
turns write by write, each round in another order, so that a slower moment of the shared
machine, or being first after a pause, falls on all alike.
Reported: the median and p90 of each, the median's ratio to the unaudited one, the gateway
process's CPU time per write (its /metrics, over the timed writes: the entry's work happens
after the answer, so it shows here rather than in the latency), and how long each database
took to hold every entry after the last write. ``--json`` prints the figures as
JSON (the smoke test reads them).
"""

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time

from tests.cluster.controlplane import LocalCluster
from tests.support.gateway import Gateway


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_seconds(gw):
    """The gateway process's CPU time so far (its /metrics)."""
    found = re.search(r"^process_cpu_seconds_total (\S+)$", gw.get("/metrics").data.decode(),
                      re.M)
    return float(found.group(1))


def pending(gw):
    found = re.search(r"^dashboard_audit_entries_pending (\S+)$", gw.get("/metrics").data.decode(),
                      re.M)
    return float(found.group(1)) if found else 0.0


def run(args):
    started = []
    cluster = None
    postgres = None
    folder = tempfile.mkdtemp(prefix="bench-audit-")
    try:
        if args.kubeconfig:
            token, kubeconfig = args.token, args.kubeconfig
        else:
            cluster = LocalCluster.start(nodes=1)
            token, kubeconfig = cluster.admin_token, cluster.kubeconfig
        variants = [("none", "none"), ("sqlite", os.path.join(folder, "audit.db"))]
        if args.postgres:
            from tests.support.postgres import PostgresServer  # only when asked for
            postgres = PostgresServer().start()
            variants.append(("postgresql", postgres.url))
        gateways = {}
        for name, target in variants:
            gw = Gateway.start(None, "--kubeconfig", kubeconfig, "--audit-db", target,
                               "--metrics-provider", "none", kubeconfig=False)
            started.append(gw)
            gateways[name] = gw
        namespace = "bench-audit-%d" % os.getpid()
        first = next(iter(gateways.values()))
        reply = first.request("POST", "/api/v1/namespace", token=token,
                              body={"name": namespace}, csrf="namespace")
        assert reply.status == 201, reply
        reply = first.request("POST", "/api/v1/appdeployment", token=token,
                              csrf="appdeployment", body={
                                  "name": "bench", "namespace": namespace,
                                  "containerImage": "nginx:1.19", "replicas": 1,
                                  "portMappings": [], "variables": [],
                                  "labels": [{"key": "app", "value": "bench"}],
                                  "runAsPrivileged": False})
        assert reply.status == 201, reply
        path = "/api/v1/scale/deployment/%s/bench" % namespace
        times = {name: [] for name in gateways}
        for name, gw in gateways.items():   # warm: caches started, connections open
            for _ in range(3):
                assert gw.request("PUT", path, token=token, params={"scaleBy": 1}).status == 200
        order = list(gateways.items())
        cpu = {name: cpu_seconds(gw) for name, gw in gateways.items()}
        for i in range(args.writes):
            # Each round in another order: no gateway always writes first after a pause.
            for name, gw in order[i % len(order):] + order[:i % len(order)]:
                t0 = time.perf_counter()
                reply = gw.request("PUT", path, token=token, params={"scaleBy": 1 + i % 2})
                times[name].append((time.perf_counter() - t0) * 1000)
                assert reply.status == 200, reply
        stored_after = {}
        for name, gw in gateways.items():
            if name == "none":
                continue
            t0 = time.perf_counter()
            while pending(gw) and time.perf_counter() - t0 < 30:
                time.sleep(0.01)
            stored_after[name] = round((time.perf_counter() - t0) * 1000, 1)
        cpu = {name: (cpu_seconds(gw) - cpu[name]) * 1000 / args.writes
               for name, gw in gateways.items()}
        base = statistics.median(times["none"])
        result = {"writes": args.writes, "stored_after_ms": stored_after}
        for name, values in times.items():
            median = statistics.median(values)
            result[name] = {"p50_ms": round(median, 2), "p90_ms": round(quantile(values, 0.9), 2),
                            "ratio_to_none": round(median / base, 3),
                            "cpu_ms_per_write": round(cpu[name], 2)}
        first.request("DELETE", "/api/v1/_raw/namespace/name/" + namespace, token=token)
        return result
    finally:
        for gw in started:
            gw.stop()
        if postgres is not None:
            postgres.remove()
        if cluster is not None:
            cluster.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=400, help="writes through each gateway")
    parser.add_argument("--postgres", action="store_true", help="a PostgreSQL gateway too")
    parser.add_argument("--kubeconfig", help="a running cluster's admin kubeconfig")
    parser.add_argument("--token", help="its admin token (with --kubeconfig)")
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(result))
        return 0
    print("%d scale writes through each gateway, taking turns" % result["writes"])
    for name in ("none", "sqlite", "postgresql"):
        if name in result:
            figures = result[name]
            stored = result["stored_after_ms"].get(name)
            print("  --audit-db %-10s p50 %7.2f ms  p90 %7.2f ms  ratio %.3f  CPU %.2f ms a write%s"
                  % (name, figures["p50_ms"], figures["p90_ms"], figures["ratio_to_none"],
                     figures["cpu_ms_per_write"], "" if stored is None else
                     "  (every entry stored %.1f ms after the last write)" % stored))
    return 0


if __name__ == "__main__":
    sys.exit(main())
