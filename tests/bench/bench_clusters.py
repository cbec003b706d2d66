"""Many clusters behind one gateway (issues #28, #30): what each costs in memory.

One stand-in API server (tests/bench/standin.py, the whole composition of issue #30 scaled to
``--pods``) is named by ``--clusters`` contexts of one kubeconfig, so the gateway serves that
many clusters, each with its own watch cache holding everything. Each cluster is used once (a
pod page), which starts its cache; the benchmark waits until every cluster's kinds have
synced, then pages every cluster, and reports RSS at each step: the gateway before any cluster
is used, after the first, after all; per cluster the difference. Run it niced, alone:

    nice .venv/bin/python -m tests.bench.bench_clusters [--pods 20000] [--clusters 10] \\
        [--pods-only] [--json out.json]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse

import urllib3

from tests.bench.bench_scale import PAGE, Sampler, StandIn, memory, pool
from tests.cluster.procs import free_ports
from tests.support.gateway import ROOT, Gateway

TOKEN = "bench-admin"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def kubeconfig(standin, directory, count):
    """A kubeconfig of ``count`` contexts c0..c{count-1}, every one the stand-in."""
    path = os.path.join(directory, "kubeconfig")
    names = ["c%d" % i for i in range(count)]
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": names[0],
                   "clusters": [{"name": "standin", "cluster": {"server": standin.url}}],
                   "users": [{"name": "svc", "user": {"token": "service-dashboard"}}],
                   "contexts": [{"name": n, "context": {"cluster": "standin", "user": "svc"}}
                                for n in names]}, f)
    return path, names


def start_gateway(path):
    [port] = free_ports(1)
    argv = [sys.executable, "-m", "dashboard_api", "--kubeconfig", path,
            "--insecure-bind-address", "127.0.0.1", "--insecure-port", str(port),
            "--drain-period", "0", "--metrics-provider", "none"]
    log_file = tempfile.NamedTemporaryFile(prefix="gateway-clusters-", suffix=".log",
                                           delete=False)
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT)
    return Gateway(proc, "http://127.0.0.1:%d" % port, log_file.name)


def syncing(http, gw):
    """{cluster: kinds still syncing} from /metrics."""
    text = http.request("GET", gw.url + "/metrics").data.decode()
    out = {}
    for m in re.finditer(r'^dashboard_cache_state\{cluster="([^"]+)",kind="[^"]+",'
                         r'state="syncing"\} (\S+)$', text, re.M):
        out[m.group(1)] = out.get(m.group(1), 0) + (float(m.group(2)) > 0)
    return out


def pod_page(http, gw, name):
    t0 = time.perf_counter()
    r = http.request("GET", "%s/clusters/%s/api/v1/pod?%s" % (
        gw.url, name, urllib.parse.urlencode(PAGE)),
        headers={"Authorization": "Bearer " + TOKEN})
    return r.status, time.perf_counter() - t0


def wait(predicate, budget, what):
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise RuntimeError("%s not within %ss" % (what, budget))


def run(args):
    result = {"pods": args.pods, "clusters": args.clusters,
              "composition": not args.pods_only}
    standin = StandIn(args.pods, composed=not args.pods_only)
    gw = None
    try:
        with tempfile.TemporaryDirectory() as directory:
            path, names = kubeconfig(standin, directory, args.clusters)
            gw = start_gateway(path)
            sampler = Sampler(gw.proc.pid)
            http = pool()
            t0 = time.perf_counter()
            wait(lambda: _ready(http, gw), args.budget, "the default cluster ready")
            result["default_ready_s"] = round(time.perf_counter() - t0, 1)
            result["rss_one_cluster_mib"] = round(memory(gw.proc.pid)[0])
            log("default cluster ready in %.1fs, RSS %d MiB" % (
                result["default_ready_s"], result["rss_one_cluster_mib"]))
            statuses = []
            for name in names[1:]:
                statuses.append(pod_page(http, gw, name)[0])   # starts its cache
                wait(lambda: not syncing(http, gw).get(name), args.budget,
                     "cluster %s synced" % name)
                log("cluster %s synced, RSS %d MiB" % (name, memory(gw.proc.pid)[0]))
            result["rss_all_clusters_mib"] = round(memory(gw.proc.pid)[0])
            pages = [pod_page(http, gw, name) for name in names for _ in range(5)]
            result["page_statuses"] = sorted({s for s, _ in pages} | set(statuses))
            result["page_p50_ms"] = round(sorted(t for _, t in pages)[len(pages) // 2] * 1000,
                                          2)
            sampler.stop()
            result["rss_peak_mib"] = round(max(sampler.peak, memory(gw.proc.pid)[1] or 0))
            if args.clusters > 1:
                result["mib_per_added_cluster"] = round(
                    (result["rss_all_clusters_mib"] - result["rss_one_cluster_mib"])
                    / (args.clusters - 1), 1)
    finally:
        if gw is not None:
            gw.stop()
        standin.stop()
    return result


def _ready(http, gw):
    if gw.proc.poll() is not None:
        raise RuntimeError("gateway exited:\n%s" % gw.log())
    try:
        return http.request("GET", gw.url + "/readyz").status == 200
    except urllib3.exceptions.HTTPError:  # not listening yet
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description="many clusters: memory per cluster")
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--pods-only", action="store_true",
                        help="the stand-in holds pods only, not the whole composition")
    parser.add_argument("--budget", type=float, default=300.0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    result = run(args)
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
