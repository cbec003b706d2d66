"""What --cache-enabled saves: one list page, sequential, through a gateway with and without
it (both on the watch cache, the default), interleaved rounds; and the cost of getting a
caller's handle in-process. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_cache_enabled [--requests 300] [--rounds 5]
"""

import argparse
import statistics
import time
import timeit

from tests.cluster.controlplane import LocalCluster
from tests.support.gateway import Gateway


def handle_cost(cached):
    from dashboard_api.kubeapi.client import Cluster
    from dashboard_api.kubeapi.handlecache import CachingCluster

    class Config:
        host = "https://127.0.0.1:1"
    cluster = CachingCluster(Config()) if cached else Cluster(Config())
    token = "x" * 900  # the size of a service account token
    n = 20000
    return min(timeit.repeat(lambda: cluster.handle(token), number=n, repeat=5)) / n * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print("handle(token): %.2f us new, %.2f us from --cache-enabled"
          % (handle_cost(False), handle_cost(True)))
    cluster = LocalCluster.start(nodes=1)
    try:
        ns = cluster.new_namespace()
        for i in range(20):
            cluster.request("POST", "/api/v1/namespaces/%s/configmaps" % ns, {
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm-%d" % i}})
        gateways = {"default": Gateway.start(cluster),
                    "--cache-enabled": Gateway.start(cluster, "--cache-enabled")}
        times = {name: [] for name in gateways}
        try:
            for gw in gateways.values():
                gw.wait_cache_synced()
                for _ in range(50):  # warm up: connections, access review answers
                    gw.get("/api/v1/configmap/" + ns, token=cluster.admin_token)
            for _ in range(args.rounds):
                for name, gw in gateways.items():
                    for _ in range(args.requests):
                        t = time.perf_counter()
                        reply = gw.get("/api/v1/configmap/" + ns, token=cluster.admin_token)
                        times[name].append(time.perf_counter() - t)
                        assert reply.status == 200, reply
        finally:
            for gw in gateways.values():
                gw.stop()
        for name, values in times.items():
            values.sort()
            print("%-16s list of 10 config maps: p50 %.3f ms, mean %.3f ms, p95 %.3f ms (%d)"
                  % (name, statistics.median(values) * 1e3, statistics.mean(values) * 1e3,
                     values[int(len(values) * 0.95)] * 1e3, len(values)))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
