"""Benchmark: downloading a 200+ MB container log through the gateway.

Run from the project root (starts its own local cluster, about a minute in all):

    .venv/bin/python -m tests.bench.bench_log_download [--megabytes 220] [--rounds 2]

It writes the log straight into the node simulator's log file of one container, then downloads
it with timestamps (so the body is the file, byte for byte) from the API server directly and
through the gateway, alternating. It reports throughput of both and the gateway process's peak
extra memory: the peak resident set (VmHWM, reset through /proc/PID/clear_refs before each
download) minus the resident set before it, cross-checked by sampling VmRSS every 10 ms.
"""

import argparse
import hashlib
import json
import os
import threading
import time

import urllib3

from tests.cluster.controlplane import LocalCluster
from tests.cluster.nodesim.logs import format_ts, log_path
from tests.logs.kube import run_pod
from tests.support.gateway import Gateway

NAMESPACE, POD, CONTAINER = "bench-logs", "big-log", "app"
READ_SIZE = 1 << 20
LINE_TEXT = "GET /api/v1/things/%08d 200 in 12ms user=someone agent=bench " + "x" * 96


def write_big_log(path, megabytes):
    """Appends numbered lines with increasing timestamps until the file has `megabytes` MB."""
    target = megabytes * 1_000_000
    ts = time.time_ns() - 3600 * 10 ** 9
    n = 0
    with open(path, "ab") as f:
        while f.tell() < target:
            block = []
            for _ in range(10_000):
                block.append("%s %s\n" % (format_ts(ts), LINE_TEXT % n))
                ts += 1000
                n += 1
            f.write("".join(block).encode())
    return os.path.getsize(path)


def file_sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(READ_SIZE), b""):
            digest.update(block)
    return digest.hexdigest()


def cpu_seconds(pid):
    """User + system CPU time of a process so far (load on the machine does not change it)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


class RssSampler(threading.Thread):
    def __init__(self, pid, interval=0.01):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_kb = 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.peak_kb = max(self.peak_kb, proc_kb(self.pid, "VmRSS"))
            time.sleep(self.interval)


def download(http, url, headers):
    """(bytes, seconds, sha256, response headers) of one streamed GET."""
    start = time.monotonic()
    response = http.request("GET", url, headers=headers, preload_content=False)
    assert response.status == 200, (response.status, response.read(500))
    digest, size = hashlib.sha256(), 0
    for block in response.stream(READ_SIZE):
        digest.update(block)
        size += len(block)
    response.release_conn()
    return size, time.monotonic() - start, digest.hexdigest(), dict(response.headers)


def through_gateway(gw, token, pid):
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")  # resets VmHWM to the current resident set
    before_kb = proc_kb(pid, "VmRSS")
    cpu_before = cpu_seconds(pid)
    sampler = RssSampler(pid)
    sampler.start()
    try:
        size, seconds, sha, headers = download(
            gw.http, gw.url + "/api/v1/log/file/%s/%s/%s?timestamps=true" % (NAMESPACE, POD,
                                                                            CONTAINER),
            {"Authorization": "Bearer " + token})
    finally:
        sampler.done.set()
        sampler.join()
    peak_kb = max(proc_kb(pid, "VmHWM"), sampler.peak_kb)
    cpu = cpu_seconds(pid) - cpu_before
    return {"bytes": size, "seconds": round(seconds, 2), "sha256": sha,
            "cpu_seconds": round(cpu, 2), "cpu_s_per_100MB": round(cpu / size * 1e8, 2),
            "MB_per_s": round(size / seconds / 1e6, 1), "rss_before_MB": round(before_kb / 1024, 1),
            "peak_extra_MB": round((peak_kb - before_kb) / 1024, 1),
            "sampled_peak_extra_MB": round((sampler.peak_kb - before_kb) / 1024, 1),
            "content_disposition": headers.get("Content-Disposition")}


def straight(cluster, token):
    http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=cluster.ca_file,
                               timeout=urllib3.Timeout(connect=5, read=120))
    size, seconds, sha, _ = download(
        http, cluster.url + "/api/v1/namespaces/%s/pods/%s/log?container=%s&timestamps=true"
        % (NAMESPACE, POD, CONTAINER), {"Authorization": "Bearer " + token})
    return {"bytes": size, "seconds": round(seconds, 2), "sha256": sha,
            "MB_per_s": round(size / seconds / 1e6, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=220)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    cluster = LocalCluster.start(nodes=1)
    gw = None
    try:
        status, body = cluster.request("POST", "/api/v1/namespaces",
                                       {"metadata": {"name": NAMESPACE}})
        assert status == 201, body
        cluster.wait_for(lambda: cluster.request(
            "GET", "/api/v1/namespaces/%s/serviceaccounts/default" % NAMESPACE)[0] == 200,
            what="default service account")
        run_pod(cluster, NAMESPACE, POD, containers=(CONTAINER,))
        path = log_path(cluster.nodesim_state_dir, NAMESPACE, POD, CONTAINER, 0)
        t0 = time.monotonic()
        size = write_big_log(path, args.megabytes)
        print("wrote %.1f MB of log in %.1f s" % (size / 1e6, time.monotonic() - t0), flush=True)
        expected = file_sha256(path)
        gw = Gateway.start(cluster)
        pid = gw.proc.pid
        # Warm up the gateway (imports, pools, discovery) with a small log request.
        warm = gw.get("/api/v1/log/%s/%s/%s" % (NAMESPACE, POD, CONTAINER), cluster.admin_token)
        assert warm.status == 200, warm
        results = {"log_file_bytes": size, "direct": [], "gateway": []}
        for _ in range(args.rounds):
            direct = straight(cluster, cluster.admin_token)
            via = through_gateway(gw, cluster.admin_token, pid)
            for r in (direct, via):
                assert r["bytes"] == size and r.pop("sha256") == expected, r
            results["direct"].append(direct)
            results["gateway"].append(via)
            print(json.dumps({"direct": direct, "gateway": via}), flush=True)
        best_direct = max(r["MB_per_s"] for r in results["direct"])
        best_gateway = max(r["MB_per_s"] for r in results["gateway"])
        results["summary"] = {
            "log_MB": round(size / 1e6, 1),
            "direct_MB_per_s": best_direct,
            "gateway_MB_per_s": best_gateway,
            "gateway_vs_direct": round(best_gateway / best_direct, 2),
            "gateway_peak_extra_MB": max(r["peak_extra_MB"] for r in results["gateway"]),
            "gateway_cpu_s_per_100MB": min(r["cpu_s_per_100MB"] for r in results["gateway"]),
            "load_average_1min": round(os.getloadavg()[0], 1),
            "target_peak_extra_MB": 50,
        }
        print(json.dumps(results["summary"], indent=2))
    finally:
        if gw is not None:
            gw.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
