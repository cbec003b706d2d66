"""What a cluster costs the gateway (issue #28): memory, threads and connections to the API
server per cluster served. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_cluster_connections [--contexts 1 --contexts 5 --contexts 10]

One local cluster (1 node, the sample workloads). Per K, one gateway (metrics integration off)
with a kubeconfig of K contexts all naming that cluster: to the gateway each context is a
cluster of its own (its own client, pools, executor, watch cache), which is what K real
clusters cost it, less their objects. Measured from /proc, per phase: (1) started: the default
cluster's cache synced, the K-1 others configured and never used; (2) used: one list on every
cluster and every cache synced; (3) let go: the K-1 others idle past --cluster-idle-timeout
(10 s) and their caches let go. Reported: RSS, threads, TCP connections to the API server's
port. An idle cluster's cost is phase (1) of K less that of 1, per cluster; a started
cluster's is (2) less (1), per cluster.

Figures vary with the machine's load and the allocator: read them as orders of magnitude.
"""

import argparse
import os
import re
import time

from tests.cluster import users
from tests.cluster.controlplane import LocalCluster
from tests.cluster.workloads import seed
from tests.support.gateway import Gateway

IDLE = 10  # --cluster-idle-timeout, seconds
WAIT = 120  # the most a phase waits for the caches


def contexts_kubeconfig(cluster, k):
    path = os.path.join(cluster.state_dir, "bench-%d.kubeconfig" % k)
    users.write_contexts(path, {"ctx-%d" % i: (cluster.url, cluster.ca_file, "admin",
                                               cluster.admin_token)
                                for i in range(1, k + 1)}, "ctx-1")
    return path


def proc_status(pid):
    """(RSS in MiB, threads) of a process."""
    with open("/proc/%d/status" % pid) as f:
        text = f.read()
    rss = int(re.search(r"^VmRSS:\s+(\d+) kB", text, re.M).group(1)) / 1024
    threads = int(re.search(r"^Threads:\s+(\d+)", text, re.M).group(1))
    return rss, threads


def connections_to(pid, port):
    """Established TCP connections of process ``pid`` to ``port`` (any address)."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    count = 0
    for table in ("tcp", "tcp6"):
        with open("/proc/%d/net/%s" % (pid, table)) as f:
            next(f)
            for line in f:
                fields = line.split()
                remote, state, inode = fields[2], fields[3], fields[9]
                if state == "01" and inode in inodes and int(remote.split(":")[1], 16) == port:
                    count += 1
    return count


def cache_clusters(gw):
    """{cluster: (kinds synced, kinds syncing)} from /metrics."""
    out = {}
    text = gw.get("/metrics").data.decode()
    for cluster, state, value in re.findall(
            r'^dashboard_cache_state\{cluster="([^"]+)",kind="[^"]+",state="(synced|syncing)"\}'
            r' (\S+)$', text, re.M):
        synced, syncing = out.get(cluster, (0, 0))
        if float(value):
            out[cluster] = (synced + (state == "synced"), syncing + (state == "syncing"))
        else:
            out.setdefault(cluster, (synced, syncing))
    return out


def wait_for(condition, what):
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("not within %ds: %s" % (WAIT, what))
        time.sleep(0.5)


def all_synced(gw, names):
    states = cache_clusters(gw)
    return all(n in states and states[n][0] and not states[n][1] for n in names)


def sample(gw, port):
    time.sleep(3)  # let the start settle (first lists' pages freed)
    rss, threads = proc_status(gw.proc.pid)
    return rss, threads, connections_to(gw.proc.pid, port)


def measure(cluster, k):
    port = int(cluster.url.rsplit(":", 1)[1])
    names = ["ctx-%d" % i for i in range(1, k + 1)]
    gw = Gateway.start(cluster, "--kubeconfig", contexts_kubeconfig(cluster, k),
                       "--metrics-provider", "none", "--cluster-idle-timeout", "%ds" % IDLE,
                       kubeconfig=False, timeout=60)
    try:
        wait_for(lambda: all_synced(gw, names[:1]), "the default cluster's cache synced")
        started = sample(gw, port)
        for name in names[1:]:
            reply = gw.get("/clusters/%s/api/v1/namespace" % name, token=cluster.admin_token)
            assert reply.status == 200, reply
        wait_for(lambda: all_synced(gw, names), "every cluster's cache synced")
        used = sample(gw, port)
        let_go = None
        if k > 1:
            wait_for(lambda: set(cache_clusters(gw)) == {names[0]},
                     "the idle clusters' caches let go")
            let_go = sample(gw, port)
        return started, used, let_go
    finally:
        gw.stop()


def fmt(phase):
    return "-" if phase is None else "%.0f MiB, %d threads, %d connections" % phase


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--contexts", type=int, action="append")
    args = parser.parse_args()
    sizes = args.contexts or [1, 5, 10]
    cluster = LocalCluster.start(nodes=1)
    try:
        seed(cluster)
        results = {k: measure(cluster, k) for k in sizes}
    finally:
        cluster.stop()
    for k, (started, used, let_go) in results.items():
        print("K=%-3d started: %s | used: %s | let go: %s" % (k, fmt(started), fmt(used),
                                                               fmt(let_go)))
    base = results.get(1)
    for k, (started, used, _let_go) in results.items():
        if k == 1:
            continue
        per = [(u - s) / (k - 1) for u, s in zip(used, started)]
        print("K=%d per started cluster: %.1f MiB, %.1f threads, %.1f connections"
              % ((k,) + tuple(per)))
        if base is not None:
            idle = [(s - b) / (k - 1) for s, b in zip(started, base[0])]
            print("K=%d per idle cluster: %.2f MiB, %.1f threads, %.1f connections"
                  % ((k,) + tuple(idle)))


if __name__ == "__main__":
    main()
