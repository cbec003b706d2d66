"""Benchmark of issue #11: list pages through the shared watch cache and through pass-through
lists, at 2,000 to 50,000 pods, against the API server's own LIST. The suite runs it only at
700 pods with ``--quick`` (tests/bench/test_bench_lists_smoke.py), to keep it from rotting.

    .venv/bin/python -m tests.bench.bench_lists --pods 2000 [--pods 20000 ...] [--json out.json]
        [--profile DIR]   # py-spy (pip install py-spy into .venv) records the gateway per phase
        [--quick]         # a few requests of each case: that it runs, not figures
    .venv/bin/python -m tests.bench.bench_lists --summarize DIR/*.txt   # what dominates each

One local cluster serves every size: the objects are added up to each size in turn. Per size:

- seeding, straight through the API server with a thread pool: N/20 Deployments, each with one
  ReplicaSet (owner reference to the Deployment) and 20 pods (owner reference to the ReplicaSet),
  N/10 events about the pods. Pods are the size of real ones (two containers with env, probes,
  mounts and resources; status with conditions and container statuses set through pods/status)
  and bound to a Node object ``bench-node`` created first (the pod garbage collector deletes pods
  of a missing node; the node simulator leaves nodes it does not run alone). The deployment and
  replicaset controllers are left out of this cluster, so the objects stay objects: a controller
  would create, adopt or delete pods of them. Their status is written through /status.
- the API server's LIST of the namespace's pods (admin token, raw bytes, no decode): p50.
- a gateway with the cache (default flags): time from start to every list kind synced on
  /metrics ("cache ready"); then, and for a gateway with ``--watch-cache=false``, four pages:
  10 pods sorted by creation time, 10 pods by name, pods filtered by a name that ~1% of them
  carry, 10 deployments by name. Each: sequential p50 and 16 concurrent clients (threads, one
  urllib3 pool each) p50/p95/requests per second, with the gateway's peak RSS (VmRSS sampled every
  50 ms). From --users-at pods on (default 20,000), also 16 different users (service accounts
  bound to ``view``): errors, 503s with Retry-After, peak RSS; and 2 users at once (as many as
  the default --max-large-lists), 3 times. With the cache, the name page is also measured while
  events are written at 5 a second (any change of a kind the page reads invalidates its
  selection). Every page is checked against the objects listed from the API server; answers that
  are not the right page (503s included) are counted by outcome, never timed.
- the whole answers of both gateways compared (``ANSWERS``: the four pages and pages in status
  order, a last page, all namespaces, replica sets and events): the cached ones read after the
  events written, the pass-through ones before its measures, with nothing written in between.
  Any difference is a bug (both sources slim and summarize the same objects the same way).
- at the end, the objects are counted again: none may have been deleted or rewritten.

Figures are noisy when the machine is shared: read them as orders of magnitude.
"""

import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

import ujson
import urllib3

from tests.cluster import controlplane
from tests.cluster.controlplane import LocalCluster
from tests.support.gateway import Gateway

NS = "bench-lists"
NODE = "bench-node"
PER_DEPLOYMENT = 20
CANARY_EVERY = 100          # every 100th deployment is a canary: its pods are 1% of all
FILTER = "canary"
CACHED_KINDS = ("pod", "deployment", "replicaset", "event")
CLIENTS = 16
SEED_THREADS = 16
# Objects only: a controller would create, adopt or delete pods of the seeded sets.
LEFT_OUT_CONTROLLERS = ("deployment", "replicaset")


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


# ---- objects ---------------------------------------------------------------------------------

def deployment_name(d):
    return "web-%05d" % d + ("-canary" if d % CANARY_EVERY == CANARY_EVERY // 3 else "")


def template_hash(d):
    return hashlib.sha1(b"%d" % d).hexdigest()[:10]


def pod_suffix(i):
    return hashlib.sha1(b"pod%d" % i).hexdigest()[:5]


def pod_name(i):
    d = i // PER_DEPLOYMENT
    return "%s-%s-%s" % (deployment_name(d), template_hash(d), pod_suffix(i))


def labels_of(d):
    return {"app": deployment_name(d), "tier": "frontend" if d % 2 else "backend",
            "team": "team-%d" % (d % 13), "version": "v1.%d.%d" % (d % 7, d % 3),
            "app.kubernetes.io/managed-by": "bench", "app.kubernetes.io/part-of": "shop"}


def _container(name, d, port):
    return {
        "name": name,
        "image": "registry.example.com/shop/%s:1.%d.%d" % (name, d % 7, d % 11),
        "imagePullPolicy": "IfNotPresent",
        "args": ["--port=%d" % port, "--log-level=info", "--config=/etc/app/config.yaml"],
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": port + 1000, "protocol": "TCP"}],
        "env": [{"name": "APP_NAME", "value": deployment_name(d)},
                {"name": "APP_ENV", "value": "production"},
                {"name": "DATABASE_URL", "value": "postgres://db.shop.svc:5432/shop"},
                {"name": "CACHE_URL", "value": "redis://cache.shop.svc:6379/0"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                                 "fieldPath": "metadata.name"}}},
                {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                                                               "fieldPath": "status.podIP"}}},
                {"name": "FEATURE_FLAGS", "value": "checkout-v2,search-ranking,fast-images"}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                      "limits": {"cpu": "500m", "memory": "512Mi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"},
                          "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 2,
                          "successThreshold": 1, "failureThreshold": 3},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": port, "scheme": "HTTP"},
                           "periodSeconds": 5, "timeoutSeconds": 2, "successThreshold": 1,
                           "failureThreshold": 3},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": True},
                         {"name": "cache", "mountPath": "/var/cache/app"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def pod_template(d):
    lb = dict(labels_of(d), **{"pod-template-hash": template_hash(d)})
    return {
        "metadata": {"labels": lb, "annotations": {
            "prometheus.io/scrape": "true", "prometheus.io/port": "9080",
            "checksum/config": hashlib.sha256(b"c%d" % d).hexdigest()}},
        "spec": {
            "containers": [_container("app", d, 8080), _container("sidecar", d, 9000)],
            "volumes": [{"name": "config", "configMap": {"name": "app-config",
                                                         "defaultMode": 420}},
                        {"name": "cache", "emptyDir": {}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "automountServiceAccountToken": False,
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300}],
        },
    }


def deployment(d):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": deployment_name(d), "labels": labels_of(d),
                         "annotations": {"deployment.kubernetes.io/revision": "1"}},
            "spec": {"replicas": PER_DEPLOYMENT, "paused": True,
                     "selector": {"matchLabels": {"app": deployment_name(d)}},
                     "template": pod_template(d)}}


def owner(kind, api_version, name, uid):
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}


def replicaset(d, deployment_uid):
    name = "%s-%s" % (deployment_name(d), template_hash(d))
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "labels": pod_template(d)["metadata"]["labels"],
                         "annotations": {"deployment.kubernetes.io/revision": "1"},
                         "ownerReferences": [owner("Deployment", "apps/v1", deployment_name(d),
                                                   deployment_uid)]},
            "spec": {"replicas": PER_DEPLOYMENT,
                     "selector": {"matchLabels": {"app": deployment_name(d),
                                                  "pod-template-hash": template_hash(d)}},
                     "template": pod_template(d)}}


def set_status(replicas):
    return {"status": {"replicas": replicas, "readyReplicas": replicas,
                       "availableReplicas": replicas, "updatedReplicas": replicas,
                       "observedGeneration": 1}}


def pod(i, rs_uid):
    d = i // PER_DEPLOYMENT
    tmpl = pod_template(d)
    meta = dict(tmpl["metadata"], name=pod_name(i), ownerReferences=[
        owner("ReplicaSet", "apps/v1", "%s-%s" % (deployment_name(d), template_hash(d)),
              rs_uid)])
    spec = dict(tmpl["spec"], nodeName=NODE)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _now():
    return datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ")


def pod_status(i):
    now = _now()
    ip = "10.%d.%d.%d" % (1 + i // 65536, (i // 256) % 256, i % 256)

    def container_status(name):
        return {"name": name, "ready": True, "started": True, "restartCount": i % 3,
                "image": "registry.example.com/shop/%s:1.0.0" % name,
                "imageID": "docker-pullable://registry.example.com/shop/%s@sha256:%s" % (
                    name, hashlib.sha256(name.encode()).hexdigest()),
                "containerID": "containerd://" + hashlib.sha256(b"%s%d" % (
                    name.encode(), i)).hexdigest(),
                "state": {"running": {"startedAt": now}},
                "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                             "startedAt": now, "finishedAt": now}}
                if i % 3 else {}}

    conditions = [{"type": t, "status": "True", "lastProbeTime": None,
                   "lastTransitionTime": now}
                  for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {"status": {"phase": "Running", "conditions": conditions, "hostIP": "192.168.0.10",
                       "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
                       "qosClass": "Burstable",
                       "containerStatuses": [container_status("app"),
                                             container_status("sidecar")]}}


def event(e, pod_uid):
    i = e * 10
    warning = e % 4 == 0
    now = _now()
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "%s.%x" % (pod_name(i), 0x16a000000 + e)},
            "involvedObject": {"kind": "Pod", "namespace": NS, "name": pod_name(i),
                               "uid": pod_uid, "apiVersion": "v1",
                               "fieldPath": "spec.containers{app}"},
            "reason": "Unhealthy" if warning else "Pulled",
            "message": "Readiness probe failed: HTTP probe failed with statuscode: 503"
            if warning else "Container image already present on machine",
            "source": {"component": "kubelet", "host": NODE},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1 + e % 5,
            "type": "Warning" if warning else "Normal"}


# ---- the API server --------------------------------------------------------------------------

class Api:
    """Admin calls with a pool as large as the seeding threads."""

    def __init__(self, cluster):
        self.base = cluster.url
        self.token = cluster.admin_token
        self.pool = urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=cluster.ca_file,
                                        maxsize=SEED_THREADS * 2, retries=False,
                                        timeout=urllib3.Timeout(connect=5, read=120))

    def call(self, method, path, body=None, token=None, patch=False, raw=False):
        headers = {"Authorization": "Bearer " + (token or self.token),
                   "Accept": "application/json"}
        data = None
        if body is not None:
            data = ujson.dumps(body).encode()
            headers["Content-Type"] = ("application/merge-patch+json" if patch
                                       else "application/json")
        resp = self.pool.request(method, self.base + path, body=data, headers=headers)
        if raw:
            return resp.status, resp.data
        return resp.status, (ujson.loads(resp.data) if resp.data else None)

    def must(self, method, path, body=None, ok=(200, 201), **kw):
        for attempt in range(5):  # a busy API server may answer 429 or 500 "etcd timeout"
            status, out = self.call(method, path, body, **kw)
            if status in ok:
                return out
            if status not in (429, 500, 503, 504):
                break
            time.sleep(0.5 * (attempt + 1))
        raise RuntimeError("%s %s -> %s %s" % (method, path, status, str(out)[:300]))


def ns_path(plural, group=""):
    base = "/apis/%s" % group if group else "/api/v1"
    return "%s/namespaces/%s/%s" % (base, NS, plural)


def seed(cluster, api, state, target):
    """Adds deployments, replica sets, pods and events up to ``target`` pods."""
    t0 = time.perf_counter()
    if not state.get("namespace"):
        api.must("POST", "/api/v1/namespaces", {"metadata": {"name": NS}}, ok=(201, 409))
        cluster.wait_namespace_ready(NS)
        api.must("POST", "/api/v1/nodes", {"metadata": {"name": NODE, "labels": {
            "kubernetes.io/hostname": NODE}}}, ok=(201, 409))
        state.update(namespace=True, pods=0, rs_uid={}, pod_uid={}, events=0)
    first, last = state["pods"] // PER_DEPLOYMENT, target // PER_DEPLOYMENT
    apps = "apps/v1"

    def make_set(d):
        dep = api.must("POST", ns_path("deployments", apps), deployment(d))
        api.must("PATCH", ns_path("deployments/%s/status" % deployment_name(d), apps),
                 set_status(PER_DEPLOYMENT), patch=True)
        rs = api.must("POST", ns_path("replicasets", apps), replicaset(d, dep["metadata"]["uid"]))
        api.must("PATCH", ns_path("replicasets/%s/status" % rs["metadata"]["name"], apps),
                 set_status(PER_DEPLOYMENT), patch=True)
        return d, rs["metadata"]["uid"]

    def make_pod(i):
        created = api.must("POST", ns_path("pods"), pod(i, state["rs_uid"][i // PER_DEPLOYMENT]))
        api.must("PATCH", ns_path("pods/%s/status" % pod_name(i)), pod_status(i), patch=True)
        return i, created["metadata"]["uid"]

    def make_event(e):
        api.must("POST", ns_path("events"), event(e, state["pod_uid"][e * 10]))

    with concurrent.futures.ThreadPoolExecutor(SEED_THREADS) as pool:
        state["rs_uid"].update(pool.map(make_set, range(first, last)))
        t1 = time.perf_counter()
        state["pod_uid"].update(pool.map(make_pod, range(state["pods"], target)))
        t2 = time.perf_counter()
        list(pool.map(make_event, range(state["events"], target // 10)))
    state["pods"], state["events"] = target, target // 10
    t3 = time.perf_counter()
    added = target - (first * PER_DEPLOYMENT)
    log("seeded to %d pods: sets %.1f s, pods %.1f s (%.0f pods/s), events %.1f s" % (
        target, t1 - t0, t2 - t1, added / max(t2 - t1, 1e-9), t3 - t2))
    return {"seconds": round(t3 - t0, 1), "pods_per_second": round(added / max(t2 - t1, 1e-9))}


def fingerprint(api):
    """{name: resourceVersion} of the namespace's pods, and the counts of the other kinds."""
    status, body = api.call("GET", ns_path("pods"), raw=True)
    assert status == 200, status
    pods = ujson.loads(body)["items"]
    counts = {}
    for plural, group in (("deployments", "apps/v1"), ("replicasets", "apps/v1"),
                          ("events", "")):
        status, listed = api.call("GET", ns_path(plural, group) + "?limit=1")
        counts[plural] = len(listed["items"]) + listed["metadata"].get(
            "remainingItemCount", 0)
    return {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in pods}, counts


# ---- measuring -------------------------------------------------------------------------------

def pct(samples, q):
    if not samples:
        return None
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


class PeakRss:
    """The largest VmRSS of a process, sampled every 50 ms while running."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = self.last = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        self.last = int(line.split()[1]) * 1024
                        self.peak = max(self.peak, self.last)
        except OSError:
            pass

    def _run(self):
        while not self._stop.wait(0.05):
            self._sample()

    def __enter__(self):
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(2)
        self._sample()


def vm_hwm(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


class Profiler:
    """py-spy record of the gateway for one phase (raw collapsed stacks), when asked for."""

    def __init__(self, directory, pid, name):
        self.path = os.path.join(directory, name + ".txt") if directory else None
        self.pid = pid
        self.proc = None

    def __enter__(self):
        if self.path:
            spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
            self.proc = subprocess.Popen(
                [spy, "record", "-p", str(self.pid), "-o", self.path, "-f", "raw", "-r", "100",
                 "-d", "600", "--nonblocking"], stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def get_page(http, url, path, token, params):
    t0 = time.perf_counter()
    resp = http.request("GET", url + path + "?" + urllib.parse.urlencode(params),
                        headers={"Authorization": "Bearer " + token}, preload_content=True)
    return time.perf_counter() - t0, resp


def sequential(gw, case, token, count, budget):
    """One client: p50 of the right pages; every other answer is counted in ``outcomes``."""
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=120))
    samples, outcomes, deadline = [], {}, time.monotonic() + budget
    for n in range(count):
        if n >= 3 and time.monotonic() > deadline:
            break
        seconds, resp = get_page(http, gw.url, case["path"], token, case["params"])
        outcome = _outcome(case, resp)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "ok":
            samples.append(seconds)
        else:
            log("  %s: %s after %.1f s: %s" % (case["name"], outcome, seconds, resp.data[:200]))
    return {"p50_ms": round(statistics.median(samples) * 1000, 2) if samples else None,
            "n": n + 1, "outcomes": outcomes}


def _outcome(case, resp):
    if resp.status == 200:
        try:
            case["check"](ujson.loads(resp.data))
        except AssertionError:
            return "wrong page"
        return "ok"
    if resp.status == 503 and resp.headers.get("Retry-After"):
        return "503 retry-after"
    return "status %d" % resp.status


def parallel(gw, case, tokens, per_client, budget, clients=CLIENTS):
    """16 clients, each with its own pool and token (tokens[i % len]); each stops after
    ``per_client`` requests or when ``budget`` seconds have passed since the start."""
    results = [[] for _ in range(clients)]
    deadline = time.monotonic() + budget
    barrier = threading.Barrier(clients)

    def client(k):
        http = urllib3.PoolManager(retries=False, maxsize=1,
                                   timeout=urllib3.Timeout(connect=5, read=120))
        token = tokens[k % len(tokens)]
        barrier.wait(30)
        for _ in range(per_client):
            if time.monotonic() > deadline:
                break
            try:
                seconds, resp = get_page(http, gw.url, case["path"], token, case["params"])
            except urllib3.exceptions.HTTPError as exc:
                results[k].append((None, "error: %s" % type(exc).__name__, None))
                continue
            results[k].append((seconds, _outcome(case, resp), resp.status))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(budget + 180)
    wall = time.perf_counter() - t0
    flat = [r for rs in results for r in rs]
    ok = [s for s, outcome, _ in flat if outcome == "ok"]
    outcomes = {}
    for _, outcome, _ in flat:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return {"p50_ms": round(pct(ok, 0.5) * 1000, 2) if ok else None,
            "p95_ms": round(pct(ok, 0.95) * 1000, 2) if ok else None,
            "rps": round(len(ok) / wall, 2), "requests": len(flat), "outcomes": outcomes,
            "wall_s": round(wall, 1)}


def cases(expect):
    """The four pages, each with the check of its body against the API server's objects."""
    names, stamps, deps = expect["names"], expect["stamps"], expect["deployments"]
    filtered = sorted(n for n in names if FILTER in n)

    def page_names(body, key):
        return [i["objectMeta"]["name"] for i in body[key]]

    def by_created(body):
        got = [i["objectMeta"]["creationTimestamp"] for i in body["pods"]]
        assert got == stamps[:10], (got, stamps[:10])
        assert body["listMeta"]["totalItems"] == len(names)

    def by_name(body):
        assert page_names(body, "pods") == names[:10], page_names(body, "pods")
        assert body["listMeta"]["totalItems"] == len(names)

    def by_filter(body):
        assert page_names(body, "pods") == filtered[:10], page_names(body, "pods")
        assert body["listMeta"]["totalItems"] == len(filtered)

    def deployments_page(body):
        assert page_names(body, "deployments") == deps[:10], page_names(body, "deployments")
        assert body["listMeta"]["totalItems"] == len(deps)
        for item in body["deployments"]:  # the join through replica sets to pods
            assert item["pods"]["running"] == PER_DEPLOYMENT, item["pods"]

    pods_path, page = "/api/v1/pod/" + NS, {"itemsPerPage": "10", "page": "1"}
    return [
        {"name": "pods by creation", "path": pods_path, "check": by_created,
         "params": dict(page, sortBy="d,creationTimestamp")},
        {"name": "pods by name", "path": pods_path, "check": by_name,
         "params": dict(page, sortBy="a,name")},
        {"name": "pods filtered ~1%", "path": pods_path, "check": by_filter,
         "params": dict(page, filterBy="name," + FILTER, sortBy="a,name")},
        {"name": "deployments by name", "path": "/api/v1/deployment/" + NS,
         "check": deployments_page, "params": dict(page, sortBy="a,name")},
    ]


# Whole answers compared between the two gateways: the four pages and the pages the four do not
# check (status order, a last page, all namespaces, the related kinds' lists).
ANSWERS = (
    "/api/v1/pod/%(ns)s?itemsPerPage=10&page=1&sortBy=d,creationTimestamp",
    "/api/v1/pod/%(ns)s?itemsPerPage=10&page=1&sortBy=a,name",
    "/api/v1/pod/%(ns)s?itemsPerPage=10&page=1&sortBy=a,name&filterBy=name," + FILTER,
    "/api/v1/pod/%(ns)s?itemsPerPage=10&page=3&sortBy=a,status,a,name",
    "/api/v1/pod/%(ns)s?itemsPerPage=7&page=%(last)d&sortBy=d,name",
    "/api/v1/pod?itemsPerPage=10&page=2&sortBy=d,creationTimestamp,a,name",
    "/api/v1/deployment/%(ns)s?itemsPerPage=10&page=1&sortBy=a,name",
    "/api/v1/replicaset/%(ns)s?itemsPerPage=5&page=2&sortBy=d,name",
    "/api/v1/event/%(ns)s?itemsPerPage=10&page=1&sortBy=d,lastSeen,a,name",
)


def answers(gw, token, n):
    """{path: (status, decoded body)} of every path of ANSWERS."""
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=120))
    out = {}
    for template in ANSWERS:
        path = template % {"ns": NS, "last": (n + 6) // 7}
        resp = http.request("GET", gw.url + path, headers={"Authorization": "Bearer " + token})
        out[path] = (resp.status, ujson.loads(resp.data) if resp.data else None)
    return out


def first_difference(a, b, where="$"):
    """Where two decoded JSON values first differ, and how (None when equal)."""
    if type(a) is not type(b):
        return "%s: %r != %r" % (where, a, b)
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return "%s.%s: only in the %s answer" % (where, key,
                                                         "cached" if key in a else "pass-through")
            found = first_difference(a[key], b[key], "%s.%s" % (where, key))
            if found:
                return found
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, "%s[%d]" % (where, i))
            if found:
                return found
        if len(a) != len(b):
            return "%s: %d items != %d" % (where, len(a), len(b))
        return None
    return None if a == b else "%s: %r != %r" % (where, a, b)


def compare_answers(cached, passed):
    """{path: where the cached answer differs from the pass-through one} (empty: the same)."""
    return {path: first_difference(cached[path], passed[path])
            for path in cached if cached[path] != passed[path]}


def _parse_stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def apiserver_list(api, rounds, budget):
    """p50 of the raw LIST (bytes read, not decoded), and the decoded objects of one of them."""
    samples, body, deadline = [], None, time.monotonic() + budget
    for n in range(rounds):
        if n >= 3 and time.monotonic() > deadline:
            break
        t0 = time.perf_counter()
        status, body = api.call("GET", ns_path("pods"), raw=True)
        samples.append(time.perf_counter() - t0)
        assert status == 200, status
    return statistics.median(samples), body


def expectations(api, raw):
    pods = ujson.loads(raw)["items"]
    stamps = sorted((p["metadata"]["creationTimestamp"] for p in pods), reverse=True)
    status, deps = api.call("GET", ns_path("deployments", "apps/v1"))
    return {"names": sorted(p["metadata"]["name"] for p in pods), "stamps": stamps,
            "deployments": sorted(d["metadata"]["name"] for d in deps["items"]),
            "versions": {p["metadata"]["name"]: p["metadata"]["resourceVersion"] for p in pods}}


_STATE = re.compile(r'^dashboard_cache_state\{cluster="[^"]+",kind="([a-z]+)",state="synced"\} 1', re.M)


def wait_synced(gw, timeout):
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=2, read=10))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gw.proc.poll() is not None:
            raise RuntimeError("gateway exited:\n" + gw.log())
        try:
            text = http.request("GET", gw.url + "/metrics").data.decode()
        except urllib3.exceptions.HTTPError:
            text = ""
        synced = set(_STATE.findall(text))
        if set(CACHED_KINDS) <= synced:
            return True
        time.sleep(0.1)
    return False


def user_tokens(cluster, api, count):
    """``count`` service accounts bound to the ``view`` cluster role, and their tokens."""
    for k in range(count):
        api.must("POST", "/api/v1/namespaces/%s/serviceaccounts" % NS,
                 {"metadata": {"name": "viewer-%02d" % k}}, ok=(201, 409))
        api.must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": "bench-viewer-%02d" % k},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "viewer-%02d" % k,
                          "namespace": NS}]}, ok=(201, 409))
    return [cluster.service_account_token(NS, "viewer-%02d" % k) for k in range(count)]


class Churn:
    """Writes events about the pods at ``rate`` a second while in use (as a busy cluster does:
    events are the kind that changes most, and the pod list reads them), at most 2,000."""

    def __init__(self, api, state, rate=5):
        self.api, self.state, self.rate = api, state, rate
        self.written = 0
        self._stop = threading.Event()
        self._thread = None

    def _run(self):
        while self.written < 2000 and not self._stop.wait(1.0 / self.rate):
            e = self.state["events"]
            self.state["events"] += 1
            i = (e * 10) % self.state["pods"]
            body = event(e, self.state["pod_uid"][i])
            body["involvedObject"]["name"] = pod_name(i)
            self.api.must("POST", ns_path("events"), body)
            self.written += 1

    def __enter__(self):
        self.written = 0
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(30)


def measure_gateway(gw, mode, page_cases, token, users, churn, n, profile_dir, quick=False):
    """Every case sequentially then with 16 clients; the name page with events being written;
    16 users on the creation-time page. ``quick``: a few requests of each, to see it run."""
    out = {}
    seq_budget = 20 if mode == "cache" else 60
    conc_budget = 30 if mode == "cache" else 90
    # Pass-through pages of 50,000 pods take tens of seconds each: one per client there.
    per_client = 40 if mode == "cache" else max(1 if n > 20000 else 2, min(10, 40000 // n))
    seq_count = 30 if mode == "cache" else 10
    if quick:   # through the pass-through path each page is a LIST of every pod: one a client
        seq_budget, conc_budget = 10, 10
        per_client, seq_count = (2, 3) if mode == "cache" else (1, 2)
    for case in page_cases:
        name = case["name"]
        seq = sequential(gw, case, token, seq_count, seq_budget)
        with PeakRss(gw.proc.pid) as rss, Profiler(
                profile_dir, gw.proc.pid, "%s-%d-%s" % (mode, n, name.replace(" ", "-"))):
            conc = parallel(gw, case, [token], per_client, conc_budget)
        out[name] = {"seq": seq, "conc": conc, "peak_rss_mb": round(rss.peak / 2**20, 1),
                     "rss_after_mb": round(rss.last / 2**20, 1)}
        log("  %-5s %-22s seq p50 %s ms %s | 16 clients p50 %s p95 %s ms, %s req/s, %s | "
            "peak RSS %.0f MB" % (mode, name, seq["p50_ms"], seq["outcomes"], conc["p50_ms"],
                                  conc["p95_ms"], conc["rps"], conc["outcomes"],
                                  rss.peak / 2**20))
    if churn is not None:
        case = page_cases[1]
        with PeakRss(gw.proc.pid) as rss, Profiler(
                profile_dir, gw.proc.pid, "%s-%d-churn" % (mode, n)), churn:
            conc = parallel(gw, case, [token], per_client, conc_budget)
        out["%s, events +%d/s" % (case["name"], churn.rate)] = {
            "conc": conc, "peak_rss_mb": round(rss.peak / 2**20, 1),
            "rss_after_mb": round(rss.last / 2**20, 1), "events_written": churn.written}
        log("  %-5s %-22s + %d events/s: 16 clients p50 %s p95 %s ms, %s req/s, %s" % (
            mode, case["name"], churn.rate, conc["p50_ms"], conc["p95_ms"], conc["rps"],
            conc["outcomes"]))
    if users:
        case = page_cases[0]
        # As many users as list slots (--max-large-lists, 2): each should be served at once.
        two = [parallel(gw, case, users[:2], 1, conc_budget, clients=2) for _ in range(3)]
        conc = {"p50_ms": max((t["p50_ms"] or 0) for t in two) or None, "p95_ms": None,
                "rps": None, "requests": sum(t["requests"] for t in two),
                "outcomes": {}, "wall_s": max(t["wall_s"] for t in two)}
        for t in two:
            for outcome, count in t["outcomes"].items():
                conc["outcomes"][outcome] = conc["outcomes"].get(outcome, 0) + count
        out["2 users x3: " + case["name"]] = {"conc": conc, "peak_rss_mb": 0}
        log("  %-5s 2 users at once, 3 times, %s: slowest p50 %s ms, %s" % (
            mode, case["name"], conc["p50_ms"], conc["outcomes"]))
        # --quick: one page a user through the pass-through path (each a LIST of every pod of
        # its own: two of them made the suite's smoke test six seconds longer)
        per_user = 1 if quick and mode == "pass" else per_client
        with PeakRss(gw.proc.pid) as rss, Profiler(
                profile_dir, gw.proc.pid, "%s-%d-users" % (mode, n)):
            conc = parallel(gw, case, users, per_user, conc_budget)
        out["16 users: " + case["name"]] = {"conc": conc,
                                            "peak_rss_mb": round(rss.peak / 2**20, 1),
                                            "rss_after_mb": round(rss.last / 2**20, 1)}
        log("  %-5s 16 users %-13s 16 clients p50 %s p95 %s ms, %s req/s, %s | peak RSS "
            "%.0f MB" % (mode, case["name"], conc["p50_ms"], conc["p95_ms"], conc["rps"],
                         conc["outcomes"], rss.peak / 2**20))
    return out


def run_size(cluster, api, state, n, args, save):
    result = {"pods": n}
    result["seeding"] = seed(cluster, api, state, n)
    time.sleep(2)
    list_p50, raw = apiserver_list(api, 3 if args.quick else 7 if n <= 20000 else 5, 60)
    result["apiserver_list"] = {"p50_ms": round(list_p50 * 1000, 1), "bytes": len(raw),
                                "bytes_per_pod": len(raw) // n}
    log("API server LIST of %d pods: p50 %.0f ms, %.1f MB (%d bytes a pod)" % (
        n, list_p50 * 1000, len(raw) / 2**20, len(raw) // n))
    expect = expectations(api, raw)
    assert len(expect["names"]) == n, (len(expect["names"]), n)
    state["versions"] = expect.pop("versions")
    del raw
    page_cases = cases(expect)
    users = None
    if n >= args.users_at:
        users = state.get("users") or user_tokens(cluster, api, CLIENTS)
        state["users"] = users
    token = cluster.admin_token
    answered = {}
    for mode, flags in (("cache", ()), ("pass", ("--watch-cache=false",))):
        t0 = time.perf_counter()
        gw = Gateway.start(cluster, *flags, timeout=60)
        listening = time.perf_counter() - t0
        try:
            if mode == "cache":
                with PeakRss(gw.proc.pid) as rss, Profiler(
                        args.profile, gw.proc.pid, "cache-%d-startup" % n):
                    ok = wait_synced(gw, 900)
                ready = time.perf_counter() - t0
                assert ok, "the cache did not sync within 900 s:\n" + gw.log()
                result["cache_ready_s"] = round(ready, 2)
                result["cache_ready_after_listening_s"] = round(ready - listening, 2)
                result["cache_ready_peak_rss_mb"] = round(rss.peak / 2**20, 1)
                log("cache ready %.1f s after start, %.1f s after listening (%.1f LISTs), "
                    "peak RSS %.0f MB" % (ready, ready - listening, ready / list_p50,
                                          rss.peak / 2**20))
            churn = Churn(api, state) if mode == "cache" else None
            if mode == "pass":
                answered["pass"] = answers(gw, token, n)
            result[mode] = measure_gateway(gw, mode, page_cases, token,
                                           users, churn, n, args.profile, args.quick)
            result[mode + "_vmhwm_mb"] = round(vm_hwm(gw.proc.pid) / 2**20, 1)
            if mode == "cache":   # after the events written: nothing changes until the next
                answered["cache"] = answers(gw, token, n)
            save(result)
        finally:
            gw.stop()
    differences = compare_answers(answered["cache"], answered["pass"])
    result["answers_compared"] = len(answered["cache"])
    # What was compared: each cached answer's status and how many items it listed.
    result["answers_items"] = {path: (status, max((len(v) for v in (body or {}).values()
                                                   if isinstance(v, list)), default=0))
                               for path, (status, body) in answered["cache"].items()}
    result["answers_differing"] = differences
    for path, where in differences.items():
        log("  cached answer differs from pass-through: %s at %s" % (path, where))
    return result


def summarize(path, top=18):
    """The functions that dominate a py-spy raw recording: own samples and samples inside."""
    own, inside, total = {}, {}, 0
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack:
                continue
            count = int(count)
            total += count
            frames = [re.sub(r":\d+\)$", ")", fr) for fr in stack.split(";")]
            own[frames[-1]] = own.get(frames[-1], 0) + count
            for fr in set(frames):
                inside[fr] = inside.get(fr, 0) + count
    lines = ["%s: %d samples" % (path, total)]
    for title, table_ in (("own", own), ("inside", inside)):
        lines.append("  -- %s" % title)
        for fr, count in sorted(table_.items(), key=lambda kv: -kv[1])[:top]:
            lines.append("  %5.1f%%  %s" % (100.0 * count / max(total, 1), fr))
    return "\n".join(lines)


# ---- report ----------------------------------------------------------------------------------

def table(result):
    list_ms = result["apiserver_list"]["p50_ms"]
    lines = ["", "N = %d pods; API server LIST p50 %.0f ms (%.1f MB, %d B/pod); cache ready %.1f s "
             "= %.1f LISTs (%.1f s after listening); peak RSS (whole process life) cache %.0f MB, pass-through %.0f MB" % (
                 result["pods"], list_ms, result["apiserver_list"]["bytes"] / 2**20,
                 result["apiserver_list"]["bytes_per_pod"], result["cache_ready_s"],
                 result["cache_ready_s"] * 1000 / list_ms,
                 result["cache_ready_after_listening_s"], result["cache_vmhwm_mb"],
                 result["pass_vmhwm_mb"]),
             "%-30s %-5s %10s %7s %10s %10s %7s %8s %8s  %s" % (
                 "case", "mode", "seq p50 ms", "/LIST", "c16 p50 ms", "c16 p95 ms", "/LIST",
                 "req/s", "RSS MB", "outcomes")]
    for mode in ("cache", "pass"):
        for name, r in result[mode].items():
            seq, conc = r.get("seq"), r["conc"]

            def ratio(ms):
                return "%.3f" % (ms / list_ms) if ms is not None else "-"
            lines.append("%-30s %-5s %10s %7s %10s %10s %7s %8s %8.0f  %s" % (
                name, mode, seq["p50_ms"] if seq else "-", ratio(seq["p50_ms"]) if seq else "-",
                conc["p50_ms"], conc["p95_ms"], ratio(conc["p50_ms"]), conc["rps"],
                r["peak_rss_mb"], ("seq %s " % _counts(seq["outcomes"]) if seq else "")
                + "c16 " + _counts(conc["outcomes"])))
    differing = result["answers_differing"]
    lines.append("whole answers, cache vs pass-through: %d compared, %s" % (
        result["answers_compared"], "%d differ: %s" % (len(differing), differing)
        if differing else "all the same"))
    return "\n".join(lines)


def _counts(outcomes):
    return ",".join("%s:%d" % kv for kv in outcomes.items())


def add_ratios(result):
    list_ms = result["apiserver_list"]["p50_ms"]
    result["cache_ready_in_lists"] = round(result["cache_ready_s"] * 1000 / list_ms, 2)
    for mode in ("cache", "pass"):
        for r in result[mode].values():
            for part in ("seq", "conc"):
                if r.get(part) and r[part].get("p50_ms") is not None:
                    r[part]["p50_ratio_to_list"] = round(r[part]["p50_ms"] / list_ms, 4)
            if r["conc"].get("p95_ms") is not None:
                r["conc"]["p95_ratio_to_list"] = round(r["conc"]["p95_ms"] / list_ms, 4)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pods", type=int, action="append",
                   help="a size to measure (repeatable, ascending); default 2000")
    p.add_argument("--users-at", type=int, default=20000,
                   help="from this size on, also 16 different users")
    p.add_argument("--json", help="write the figures here")
    p.add_argument("--quick", action="store_true",
                   help="a few requests of each case (the suite's smoke test), not figures")
    p.add_argument("--profile", help="a directory for py-spy recordings of each phase")
    p.add_argument("--summarize", nargs="+", metavar="RECORDING",
                   help="only print what dominates these py-spy recordings")
    args = p.parse_args(argv)
    if args.summarize:
        for path in args.summarize:
            print(summarize(path))
        return 0
    sizes = sorted(set(args.pods or [2000]))
    assert all(n % PER_DEPLOYMENT == 0 and n >= 200 for n in sizes), "sizes: multiples of 20"
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)

    controlplane.CONTROLLERS = [c for c in controlplane.CONTROLLERS
                                if c not in LEFT_OUT_CONTROLLERS]
    cluster = LocalCluster.start(nodes=1)
    results, state = [], {}
    try:
        api = Api(cluster)
        def save(partial=None):
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "note": "shared 2-core machine: figures are noisy",
                               "results": results + ([partial] if partial else [])}, f,
                              indent=1)

        for n in sizes:
            result = run_size(cluster, api, state, n, args, save)
            now, counts = fingerprint(api)
            result["objects_at_end"] = dict(counts, pods=len(now))
            # Pods neither deleted nor rewritten between seeding and the end of the measures.
            seeded = {pod_name(i) for i in range(n)}
            assert set(now) == seeded, "pods were deleted or added: %d of %d" % (len(now), n)
            changed = [k for k, v in state["versions"].items() if now.get(k) != v]
            assert not changed, "pods rewritten during the run: %s" % changed[:5]
            assert counts["deployments"] == n // PER_DEPLOYMENT, counts
            assert counts["replicasets"] == n // PER_DEPLOYMENT, counts
            assert counts["events"] >= n // 10, counts
            add_ratios(result)
            results.append(result)
            print(table(result), flush=True)
            save()
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
