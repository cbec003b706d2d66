"""What caching leases costs (issue #21): every kubelet renews its node's Lease every 10 seconds,
so a cluster of N nodes writes N/10 lease changes a second, each a watch event the gateway's
cache applies whether anyone looks at leases or not. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_leases [--nodes 1000 --nodes 3000] [--seconds 30]

Per size N: N leases in a namespace of their own (as kube-node-lease holds one per node), one
gateway with ``--watch-cache-opt-in=lease`` (leases cached; by default they are not) and one with
``--watch-cache=false`` (nothing cached: the control). Then, for ``--seconds`` each, (1) idle:
nothing written; (2) heartbeats: every lease renewed once every 10 seconds (N/10 merge patches a
second, spread evenly, from a thread pool). Reported per phase: lease events the cached gateway
applied per second (``dashboard_cache_events_applied{kind="lease"}``), each gateway's CPU (user +
system, from /proc, as a share of one core) and the API server's; the cost of caching is the cached
gateway's CPU in (2) minus (1), less the same difference of the control, per event. Finally a page
of the N leases (``itemsPerPage=10``, sorted by renewTime) from both gateways, sequential p50 of
20.

Figures are noisy when the machine is shared: read them as orders of magnitude.
"""

import argparse
import concurrent.futures
import json
import os
import re
import statistics
import threading
import time

from tests.cluster.controlplane import LocalCluster
from tests.support.gateway import Gateway

NS = "bench-leases"
PERIOD = 10.0           # a kubelet's lease renew interval (a quarter of its 40 s duration)
THREADS = 8
TICKS = 10              # writes are issued in 10 bursts a second


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def micro_time():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def cpu_seconds(pid):
    """User + system CPU seconds of a process (and its reaped children: none here)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def events_applied(gateway, kind="lease"):
    text = gateway.get("/metrics").data.decode()
    m = re.search(r'^dashboard_cache_events_applied\{cluster="[^"]+",kind="%s"\} (\S+)$' % kind, text, re.M)
    return float(m.group(1)) if m else 0.0


def ensure_leases(cluster, count):
    path = "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS
    status, body = cluster.request("GET", path)
    have = {i["metadata"]["name"] for i in body.get("items", [])} if status == 200 else set()
    todo = ["node-%05d" % i for i in range(count) if "node-%05d" % i not in have]

    def make(name):
        status, reply = cluster.request("POST", path, {
            "metadata": {"name": name}, "spec": {
                "holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": micro_time()}})
        assert status == 201, reply

    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(make, todo))
    return ["node-%05d" % i for i in range(count)]


class Heartbeats:
    """Renews each lease once every PERIOD seconds, spread evenly, until stopped."""

    def __init__(self, cluster, names):
        self.cluster = cluster
        self.names = names
        self.written = 0
        self.failed = 0
        self.late = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _renew(self, name):
        status, _ = self.cluster.request(
            "PATCH", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (NS, name),
            {"spec": {"renewTime": micro_time()}})
        if status == 200:
            self.written += 1
        else:
            self.failed += 1

    def _run(self):
        per_tick = len(self.names) / PERIOD / TICKS
        i, owed = 0, 0.0
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            pending = []
            next_tick = time.monotonic()
            while not self._stop.is_set():
                owed += per_tick
                while owed >= 1:
                    pending.append(pool.submit(self._renew, self.names[i % len(self.names)]))
                    i += 1
                    owed -= 1
                pending = [f for f in pending if not f.done()]
                if len(pending) > 4 * THREADS * per_tick + THREADS:
                    self.late += 1          # the writer cannot keep up: report, not hide
                next_tick += 1.0 / TICKS
                self._stop.wait(max(0.0, next_tick - time.monotonic()))
            concurrent.futures.wait(pending)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(60)


def measure(seconds, cached, control, apiserver_pid):
    before = (time.monotonic(), events_applied(cached), cpu_seconds(cached.proc.pid),
              cpu_seconds(control.proc.pid), cpu_seconds(apiserver_pid))
    time.sleep(seconds)
    after = (time.monotonic(), events_applied(cached), cpu_seconds(cached.proc.pid),
             cpu_seconds(control.proc.pid), cpu_seconds(apiserver_pid))
    wall = after[0] - before[0]
    return {"seconds": round(wall, 1),
            "lease_events_per_second": round((after[1] - before[1]) / wall, 1),
            "cached_gateway_cpu": round((after[2] - before[2]) / wall, 4),
            "control_gateway_cpu": round((after[3] - before[3]) / wall, 4),
            "apiserver_cpu": round((after[4] - before[4]) / wall, 3)}


def page_p50(gateway, token, n=20):
    path = "/api/v1/lease/%s?itemsPerPage=10&sortBy=d,renewTime" % NS
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        reply = gateway.get(path, token=token)
        times.append(time.perf_counter() - t0)
        assert reply.status == 200, reply
    return round(statistics.median(times) * 1000, 1)


def wait_lease_synced(gateway, count, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = gateway.get("/metrics").data.decode()
        m = re.search(r'^dashboard_cache_objects\{cluster="[^"]+",kind="lease"\} (\S+)$', text, re.M)
        s = re.search(r'^dashboard_cache_state\{cluster="[^"]+",kind="lease",state="synced"\} (\S+)$', text,
                      re.M)
        if m and s and float(s.group(1)) == 1 and float(m.group(1)) >= count:
            return
        time.sleep(0.2)
    raise RuntimeError("the lease cache did not sync")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, action="append",
                    help="leases (simulated nodes), repeatable (default 1000)")
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    sizes = sorted(args.nodes or [1000])
    cluster = LocalCluster.start(nodes=2)
    out = {}
    try:
        apiserver = next(p for p in cluster._procs if p.name == "kube-apiserver")
        cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
        for n in sizes:
            log("%d leases" % n)
            names = ensure_leases(cluster, n)
            cached = Gateway.start(cluster, "--watch-cache-opt-in=lease")
            control = Gateway.start(cluster, "--watch-cache=false")
            try:
                wait_lease_synced(cached, n + len(cluster.nodes))
                time.sleep(2)
                idle = measure(args.seconds, cached, control, apiserver.pid)
                log("idle: %s" % idle)
                with Heartbeats(cluster, names) as beats:
                    time.sleep(2)   # let the writer reach its rate
                    busy = measure(args.seconds, cached, control, apiserver.pid)
                busy.update(written=beats.written, failed=beats.failed, writer_late=beats.late)
                log("heartbeats: %s" % busy)
                events = busy["lease_events_per_second"]
                extra = (busy["cached_gateway_cpu"] - idle["cached_gateway_cpu"]) - (
                    busy["control_gateway_cpu"] - idle["control_gateway_cpu"])
                out[n] = {"idle": idle, "heartbeats": busy,
                          "cost_cpu_share_of_a_core": round(extra, 4),
                          "cost_microseconds_per_event": round(extra / events * 1e6, 1)
                          if events else None,
                          "page_p50_ms_cached": page_p50(cached, cluster.admin_token),
                          "page_p50_ms_passthrough": page_p50(control, cluster.admin_token)}
                log("%d leases: %s" % (n, {k: v for k, v in out[n].items()
                                           if k not in ("idle", "heartbeats")}))
            finally:
                cached.stop()
                control.stop()
    finally:
        cluster.stop()
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
