"""Benchmark of the metrics sidecar at 5,000 pods. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_metrics [--pods 5000] [--rounds 10]

Starts the local cluster, creates the pods in a fresh namespace (bound to a node that does not
exist: nothing runs them), and serves metrics.k8s.io for all of them from a small in-process
stand-in (the cluster's stand-in reports running pods only). A sidecar scrapes it every 2 s and
keeps 30 s: the same 15 scrapes a window holds at the defaults (1m, 15m). Prints one scrape's
time, the database size once the window is full, and the time of a 100-pod pod list page with
``metricNames=cpu/usage,memory/usage`` against the same page without.
"""

import argparse
import http.server
import json
import os
import sqlite3
import statistics
import tempfile
import threading
import time

from tests.bench.bench_pod_list import NAMESPACE, create_pods
from tests.cluster import metrics_standin
from tests.cluster.controlplane import LocalCluster
from tests.metrics.sidecar import Sidecar
from tests.support.gateway import Gateway

RESOLUTION, DURATION = 2, 30


class BenchMetrics:
    """metrics.k8s.io and /api/v1/pods for a fixed set of pods, over plain HTTP."""

    def __init__(self, pods):
        self.pods = pods
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                path = self.path.split("?")[0]
                t = metrics_standin.sample_time()
                if path.endswith("/metrics.k8s.io/v1beta1/nodes"):
                    body = {"items": []}
                elif path.endswith("/metrics.k8s.io/v1beta1/pods"):
                    body = {"items": [owner.metrics(p, t) for p in owner.pods]}
                elif path == "/api/v1/pods":
                    body = {"items": owner.pods}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def metrics(pod, t):
        meta = pod["metadata"]
        cpu, mem = metrics_standin.usage("%s/%s" % (meta["namespace"], meta["name"]), t)
        return {"metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                "timestamp": "", "window": "30s",
                "containers": [{"name": "app", "usage": {"cpu": "%dn" % cpu,
                                                         "memory": "%dKi" % (mem // 1024)}}]}

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--pods", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=10)
    args = p.parse_args(argv)

    cluster = LocalCluster.start(nodes=1)
    source = side = gw = None
    state = tempfile.mkdtemp(prefix="bench-metrics-")
    try:
        t0 = time.perf_counter()
        create_pods(cluster, args.pods)
        print("created %d pods in %.1f s" % (args.pods, time.perf_counter() - t0))
        status, body = cluster.request("GET", "/api/v1/namespaces/%s/pods" % NAMESPACE)
        assert status == 200 and len(body["items"]) == args.pods
        source = BenchMetrics(body["items"])
        kubeconfig = os.path.join(state, "sidecar.kubeconfig")
        cluster.metrics_kubeconfig(kubeconfig)
        kubeconfig_text = open(kubeconfig).read().replace(cluster.metrics_url, source.url)
        with open(kubeconfig, "w") as f:
            f.write(kubeconfig_text)
        db = os.path.join(state, "metrics.db")
        side = Sidecar(kubeconfig, resolution="%ds" % RESOLUTION, duration="%ds" % DURATION,
                       db_file=db).start()
        scrape_times = []
        deadline = time.monotonic() + DURATION + 6 * RESOLUTION + 120
        seen = 0
        while time.monotonic() < deadline:
            health = side.get("/healthz")[1]
            if health["scrapes"] > seen:
                seen = health["scrapes"]
                scrape_times.append(health["lastScrapeSeconds"])
            if seen >= DURATION // RESOLUTION + 3:
                break
            time.sleep(0.2)
        print("scrapes: %d, one scrape of %d pods: median %.3f s, max %.3f s"
              % (seen, args.pods, statistics.median(scrape_times), max(scrape_times)))
        ro = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        rows = ro.execute("SELECT COUNT(*), COUNT(DISTINCT time) FROM pods").fetchone()
        ro.close()
        size = sum(os.path.getsize(f) for f in (db, db + "-wal") if os.path.exists(f))
        print("database after the %ds window (%d scrapes kept, %d pod rows): %.1f MB "
              "(file + WAL)" % (DURATION, rows[1], rows[0], size / 1e6))

        # The page timings run between scrapes, as they mostly would at the default 1m: the
        # sidecar restarts on the same database with a 15m resolution (one scrape at start).
        side.stop()
        side = Sidecar(kubeconfig, resolution="15m", duration="15m", db_file=db,
                       port=side.port).start()
        while side.get("/healthz")[1]["scrapes"] < 1 and time.monotonic() < deadline + 60:
            time.sleep(0.2)
        names = ",".join(sorted(p["metadata"]["name"] for p in body["items"])[200:300])
        direct = median_time(lambda: side.get(
            "/api/v1/dashboard/namespaces/%s/pod-list/%s/metrics/cpu/usage"
            % (NAMESPACE, names)), args.rounds)
        print("one sidecar request for 100 pods x %d points: %.3f s"
              % (DURATION // RESOLUTION, direct))
        gw = Gateway.start(cluster, "--sidecar-host", side.url,
                           "--metric-client-check-period", "5s")
        token = cluster.admin_token
        page = {"itemsPerPage": "100", "page": "3", "sortBy": "a,name"}

        def plain():
            r = gw.get("/api/v1/pod/" + NAMESPACE, token=token, params=page)
            assert r.status == 200 and len(r.json()["pods"]) == 100

        def with_metrics():
            r = gw.get("/api/v1/pod/" + NAMESPACE, token=token,
                       params=dict(page, metricNames="cpu/usage,memory/usage"))
            body = r.json()
            assert r.status == 200 and "warning" not in body, body.get("warning")
            assert all(p["metrics"]["cpu/usage"]["dataPoints"] for p in body["pods"])

        with_metrics()  # warm both paths
        plain()
        a = median_time(plain, args.rounds)
        b = median_time(with_metrics, args.rounds)
        print("100-pod page of %d pods: without metrics %.3f s, with metricNames %.3f s "
              "(x%.2f)" % (args.pods, a, b, b / a))
    finally:
        for thing in (gw, side, source):
            if thing is not None:
                thing.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
