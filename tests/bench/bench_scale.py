"""Benchmark of issue #19: the gateway at Kubernetes' own limit (150,000 pods) against the
stand-in API server (tests/bench/standin.py). Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_scale [--pods 150000] [--rates 0,200] [--json out.json]

It starts the stand-in (one process, 127.0.0.1), measures the reference (the stand-in's own LIST
of every pod in pages of 1,000, decoded with the standard ``json`` module), then per churn rate
(changes a second) starts one gateway process against it (a kubeconfig with a service token
pointing at the stand-in; metrics off) and measures, for the gateway process alone:

- start to ``/readyz`` 200, as a ratio to the reference; and the gateway's CPU from start to
  ready against the reference's (the stand-in's serving and this process's decoding), a ratio
  that counts no time spent waiting for a core;
- from the first second after ready (issue #41: ready means ready), the pages the web UI opens
  first and the sorts it offers (FIRST_PAGES: newest first, all namespaces and one, then each
  column's sort), each asked twice, with a probe asking a small cached list every 20 ms: the
  slowest first answer, the slowest second one, the probe's worst;
- a page asked right after start, while the cache first syncs (time to its first answer and its
  status; a 503 is retried after its Retry-After until a 200, also timed);
- RSS at ready, and peak (VmHWM at the end of the run, re-list included); VmRSS is also sampled;
  VmRSS and VmHWM after each phase (``rss_phases_mib``, logged): where the peak comes from;
- one page (10 pods, all namespaces) p50, back to back and 0.25 s apart, sorted by creation time
  and by status (a key the churn changes: the second container alternates between running and
  CrashLoopBackOff), and filtered by a name 0.1% of the pods carry, sorted by creation time;
- 16 clients (sorted by creation), then 64, each with its own token, for ``--clients-seconds``:
  p50/p95/max, req/s, errors (threads of this process, or of ``--client-processes`` processes);
- a forced 410 (every watch gets an ERROR 410 and versions are compacted): the next page, and
  every page asked by 8 clients until the gateway has re-listed (max, non-200s), with the LIST
  pages and bytes the stand-in served meanwhile (beyond the gateway's own re-list: callers'
  pass-through LISTs), and the staleness the gateway reported (``X-Dashboard-Cache-Age``).

With ``--composition`` (issue #30) the stand-in holds the whole cluster beside the pods (its
``--composition``: replica sets with their history, nodes with their images, events arriving and
expiring at 50 a second, services, endpoint slices, config maps; scaled by ``--pods`` / 150,000),
and the benchmark also measures:

- the reference over every kind the stand-in serves (each kind's LIST in pages of 1,000 decoded
  with ``json``; seconds per kind);
- each kind's ready time (when ``/metrics`` first says it is synced, polled every 0.1 s);
- one page p50 (10 items, back to back) of the event list, the replica-set list and the node
  list, and the event list's first page after ready; a pod's events sublist p50;
- the events held at ready and after the client phases, and the watch events applied between;
- memory per kind: bytes per object the cache keeps (the kind's slim record, its shared values
  and its row, not the bounded pools of shared values, measured with tracemalloc in this process
  on up to 2,000 objects of the stand-in), times the kind's objects.

Without it the stand-in is pods only, so the figures stay comparable with issue #19's.

With ``--search`` (issue #38; meant with ``--composition``) it also measures
``GET /api/v1/search`` over every kind the cache holds:

- one client back to back for each query of SEARCHES (a name word, a ``status:`` term, a
  query combining a word, a label and a status, a ``label:`` term): p50/p95, the matches, and
  the gateway's CPU per search (from /proc); the first search of each (which builds the
  filtered indexes it keeps) is timed apart;
- where a search's time goes: the combined query narrowed to each kind of the composition
  (``kind:``), p50 each;
- 10 searches a second (SEARCHES in turn) beside the 64 clients paging pods by creation: the
  searches' p50/p95 and the pod pages' throughput against the same 64 clients without them,
  run just before;
- RSS after the search phases; the peak is the run's (compare with a run without --search).

The stand-in's objects are as heavy as a real cluster's (issue #41, tests/bench/heavy.py:
managedFields, a mesh proxy and its init container, a dozen environment variables, annotations,
a full status; ~8.4 KB a pod), and each kind's JSON bytes per object are printed beside the
figures; ``--light`` serves issue #30's lighter objects, to compare with earlier figures.
``--soak-seconds S`` ends the run with a soak: S seconds at the churn rate with 8 clients
paging, a forced re-list at half time, RSS every 30 s, and its growth over the last half; at
its end a second gateway is started against the cluster as the soak left it, so that what the
soaked gateway holds beyond a fresh one (its own growth) is told from what the cluster grew.

Everything started is stopped at the end (and on errors); each phase is bounded in time.
"""

import argparse
import ast
import itertools
import json
import multiprocessing
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
import urllib.parse

import urllib3

from tests.cluster.procs import free_ports
from tests.support.gateway import ROOT, Gateway

CLIENTS = 64
PAGE = {"itemsPerPage": "10", "page": "1"}
SORTS = {"creation": "d,creationTimestamp", "status": "a,status",
         "filtered": "d,creationTimestamp"}
# The filtered page: the pods of ten replica sets, 200 (0.13% of 150,000 pods).
FILTER_BY = {"filtered": "name,app-0000"}
# The composition's kinds: (path of the stand-in's LIST, the gateway's list route, its list
# key, the cache's kind name); pods first.
KINDS = [("/api/v1/pods", "/api/v1/pod", "pods", "pod"),
         ("/apis/apps/v1/replicasets", "/api/v1/replicaset", "replicaSets", "replicaset"),
         ("/api/v1/nodes", "/api/v1/node", "nodes", "node"),
         ("/api/v1/events", "/api/v1/event", "events", "event"),
         ("/api/v1/services", "/api/v1/service", "services", "service"),
         ("/apis/discovery.k8s.io/v1/endpointslices", "/api/v1/endpointslice", "endpointSlices",
          "endpointslice"),
         ("/api/v1/configmaps", "/api/v1/configmap", "items", "configmap")]
# The other kinds' pages measured (issue #30).
OTHER_PAGES = ("event", "replicaset", "node")
# The searches measured (issue #38), over every kind: the stand-in's apps are app-00000...,
# each of 20 pods, its replica sets (history), a service, an endpoint slice and config maps.
SEARCHES = {"name": "app-00012", "status": "status:crash",
            "combined": "app-0000 label:app.kubernetes.io/part-of=bench status:running",
            "label": "label:app=app-00012"}
SEARCH_RATE = 10.0   # searches a second beside the 64 clients
RELIST_GAP = 20.0   # seconds between two forced re-lists (--relists): heap trimmed, indexes built
# The pages the web UI opens first and the sorts it offers (its columns; created, first and last
# seen as it sends them), asked right after /readyz says ready (issue #41: ready means ready):
# kind -> [(sortBy, namespace or "")]. The newest-first pages come first, all namespaces and one.
UI_SORTS = ["d,creationTimestamp", "a,name", "d,name", "a,creationTimestamp"]
FIRST_PAGES = {
    "pod": [("d,creationTimestamp", ""), ("d,creationTimestamp", "ns-00")] +
           [(s, "") for s in UI_SORTS[1:] + ["a,status", "d,status", "a,namespace"]] +
           [("a,name", "ns-01")],
    "event": [("d,lastSeen", ""), ("d,lastSeen", "ns-00"), ("d,creationTimestamp", "")] +
             [(s, "") for s in ("a,lastSeen", "d,firstSeen", "a,reason", "a,name")],
    "replicaset": [("d,creationTimestamp", ""), ("d,creationTimestamp", "ns-00")] +
                  [(s, "") for s in UI_SORTS[1:] + ["a,namespace"]],
    "node": [(s, "") for s in UI_SORTS],
    "service": [("d,creationTimestamp", ""), ("d,creationTimestamp", "ns-00"), ("a,name", "")],
    "endpointslice": [("d,creationTimestamp", ""), ("a,name", "")],
    "configmap": [("d,creationTimestamp", ""), ("d,creationTimestamp", "ns-00"),
                  ("a,name", "")],
}
# Sorts no index holds and no count answers, asked right after FIRST_PAGES: two columns (an API
# client's; the web UI sends one), each a selection among the rows its first column's order
# puts first (cache/view.py ``_narrowed``; the whole store's before it) (issue #41: a sort asked
# for the first time answers within 250 ms). Reported apart.
FIRST_SELECTIONS = {
    "event": [("a,reason,d,lastSeen", "")],
    "pod": [("a,status,d,name", "")],
}


def log(msg):
    print("[bench_scale %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def pct(samples, q):
    if not samples:
        return None
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(value):
    return None if value is None else round(value * 1000, 2)


class StandIn:
    def __init__(self, pods, bookmark_seconds=5.0, max_seconds=3600, composed=False,
                 light=False, event_rate=None):
        [self.port] = free_ports(1)
        self.url = "http://127.0.0.1:%d" % self.port
        self.log_file = tempfile.NamedTemporaryFile(prefix="standin-", suffix=".log",
                                                    delete=False)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.standin", "--pods", str(pods), "--port",
             str(self.port), "--bookmark-seconds", str(bookmark_seconds), "--max-seconds",
             str(max_seconds)] + (["--composition"] if composed else [])
            + (["--light"] if light else [])
            + ([] if event_rate is None else ["--event-rate", str(event_rate)]),
            cwd=ROOT, stdout=subprocess.PIPE, stderr=self.log_file)
        line = self.proc.stdout.readline()
        if b"READY" not in line:
            self.stop()
            raise RuntimeError("the stand-in did not start: %s" % open(self.log_file.name).read())
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5,
                                                                               read=300))

    def admin(self, action, **params):
        r = self.http.request("POST", "%s/_standin/%s?%s" % (self.url, action,
                                                            urllib.parse.urlencode(params)))
        assert r.status == 200, r.data

    def stats(self):
        return json.loads(self.http.request("GET", self.url + "/_standin/stats").data)

    def kubeconfig(self, directory):
        path = os.path.join(directory, "kubeconfig")
        with open(path, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "standin",
                       "clusters": [{"name": "standin", "cluster": {"server": self.url}}],
                       "users": [{"name": "svc", "user": {"token": "service-dashboard"}}],
                       "contexts": [{"name": "standin", "context": {"cluster": "standin",
                                                                    "user": "svc"}}]}, f)
        return path

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def reference_list(url, chunk=1000, budget=600, path="/api/v1/pods", sample=0):
    """The stand-in's own LIST of ``path`` (every pod) in pages of ``chunk``, decoded with
    ``json``: (seconds, objects, the first ``sample`` objects); ``reference_list.bytes`` is
    then the LIST's bytes (its pages' bodies)."""
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=120))
    params = {"limit": chunk}
    started = time.perf_counter()
    count = 0
    kept = []
    reference_list.bytes = 0
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        r = http.request("GET", url + path + "?" + urllib.parse.urlencode(params),
                         headers={"Authorization": "Bearer reference"})
        reference_list.bytes += len(r.data)
        body = json.loads(r.data)
        count += len(body["items"])
        if len(kept) < sample:
            kept += body["items"][:sample - len(kept)]
        token = body["metadata"].get("continue")
        if not token:
            break
        params["continue"] = token
    seconds = time.perf_counter() - started
    return (seconds, count, kept) if sample else (seconds, count)


def bytes_per_object(kind_name, objects):
    """Bytes the cache keeps per object of the kind (its slim record with shared values, and
    its row), measured with tracemalloc over ``objects``: each is decoded in the measured span
    and let go of once slimmed, so what its record still holds of it counts. Not counted: the
    pools of shared values (cache/slim.py: bounded, ~15 MiB at most whatever the kinds), which
    start empty for each kind and are let go of before the count."""
    import tracemalloc

    from dashboard_api.cache import slim
    from dashboard_api.cache.rows import row_of
    from dashboard_api.kinds import table as kinds
    kind = kinds.get(kind_name)
    if not objects:
        return None
    encoded = json.dumps(objects)
    slim._pool, slim._keys, slim._texts = {}, {}, {}
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    rows = [row_of(kind, slim.pooled(slim.slim(kind, obj))) for obj in json.loads(encoded)]
    slim._pool, slim._keys, slim._texts = {}, {}, {}
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del rows
    return round((after - before) / len(objects))


def start_gateway(standin, directory, extra=(), root=None):
    """A gateway over ``standin``, from this checkout or from ``root`` (another checkout of
    the project: a reference build, run with this one's interpreter and packages)."""
    [port] = free_ports(1)
    argv = [sys.executable, "-m", "dashboard_api", "--apiserver-host", standin.url,
            "--kubeconfig", standin.kubeconfig(directory), "--insecure-bind-address",
            "127.0.0.1", "--insecure-port", str(port), "--drain-period", "0",
            "--metrics-provider", "none"] + list(extra)
    log_file = tempfile.NamedTemporaryFile(prefix="gateway-scale-", suffix=".log", delete=False)
    # the test hooks: SIGUSR1 reports where the memory is (heap_report); nothing else changes
    env = dict(os.environ, DASHBOARD_API_TEST_HOOKS="1")
    proc = subprocess.Popen(argv, cwd=root or ROOT, stdout=log_file, stderr=subprocess.STDOUT,
                            env=env)
    gw = Gateway(proc, "http://127.0.0.1:%d" % port, log_file.name)
    gw.port = port
    return gw


def memory(pid):
    """(VmRSS, VmHWM) in MiB."""
    values = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return values.get("VmRSS"), values.get("VmHWM")


class Sampler:
    """VmRSS every 0.1 s: the highest seen (VmHWM says the same, without sampling)."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(0.1):
            rss, _ = memory(self.pid)
            if rss:
                self.peak = max(self.peak, rss)

    def stop(self):
        self._stop.set()
        self._thread.join(2)


def pool():
    return urllib3.PoolManager(retries=False, maxsize=1,
                               timeout=urllib3.Timeout(connect=5, read=180))


def page(http, gw, token, sort, namespace=""):
    path = "/api/v1/pod" + ("/" + namespace if namespace else "")
    params = dict(PAGE, sortBy=SORTS[sort])
    if sort in FILTER_BY:
        params["filterBy"] = FILTER_BY[sort]
    t0 = time.perf_counter()
    r = http.request("GET", gw.url + path + "?" + urllib.parse.urlencode(params),
                     headers={"Authorization": "Bearer " + token})
    seconds = time.perf_counter() - t0
    ok = r.status == 200
    if ok:
        body = json.loads(r.data)
        ok = len(body.get("pods") or []) == 10
    return seconds, r.status if ok or r.status != 200 else "wrong page", r


def first_page_while_syncing(gw, out, budget):
    """One page asked at start: time to its first answer; 503s retried after Retry-After."""
    http = pool()
    t0 = time.perf_counter()
    deadline = time.monotonic() + budget
    first = None
    while time.monotonic() < deadline:
        try:
            seconds, status, resp = page(http, gw, "early-caller", "creation")
        except urllib3.exceptions.HTTPError:
            time.sleep(0.1)  # not listening yet
            continue
        if first is None:
            first = {"first_answer_s": round(time.perf_counter() - t0, 2), "status": status}
        if status == 200:
            first["to_200_s"] = round(time.perf_counter() - t0, 2)
            break
        time.sleep(float(resp.headers.get("Retry-After") or 1))
    out.update(first or {"status": "no answer"})


def wait_ready(gw, budget, kinds=None):
    """Seconds to /readyz 200; ``kinds`` (a dict) gets each cached kind's seconds to synced,
    as /metrics says (polled until ready)."""
    http = pool()
    t0 = time.perf_counter()
    deadline = time.monotonic() + budget
    while time.monotonic() < deadline:
        if gw.proc.poll() is not None:
            raise RuntimeError("gateway exited:\n%s" % gw.log())
        try:
            if kinds is not None:
                for kind in synced_kinds(http, gw):
                    kinds.setdefault(kind, round(time.perf_counter() - t0, 1))
            if http.request("GET", gw.url + "/readyz").status == 200:
                ready = time.perf_counter() - t0
                if kinds is not None:   # those synced since the last look: at ready
                    for kind in synced_kinds(http, gw):
                        kinds.setdefault(kind, round(ready, 1))
                return ready
        except urllib3.exceptions.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError("gateway not ready within %ss" % budget)


def synced_kinds(http, gw):
    text = http.request("GET", gw.url + "/metrics").data.decode()
    found = []
    for line in text.splitlines():
        if line.startswith("dashboard_cache_state{") and 'state="synced"' in line and \
                float(line.rsplit(" ", 1)[1]) == 1:
            found.append(line.split('kind="')[1].split('"')[0])
    return found


def other_page(http, gw, kind):
    """One page (10 items) of another kind's list, all namespaces: (seconds, status)."""
    route, key = {k[3]: (k[1], k[2]) for k in KINDS}[kind]
    t0 = time.perf_counter()
    r = http.request("GET", gw.url + route + "?" + urllib.parse.urlencode(PAGE),
                     headers={"Authorization": "Bearer other-user"})
    seconds = time.perf_counter() - t0
    if r.status != 200:
        return seconds, r.status
    items = json.loads(r.data).get(key) or []
    return seconds, 200 if items else "empty page"


def first_pages(gw, kinds, budget):
    """The pages of FIRST_PAGES asked one after the other right after ready, each twice (its
    first answer and a second one), while a probe asks a small cached list every 20 ms: how
    long each page took, and how late the probe's answers came (what the index builds cost
    the other requests)."""
    http = pool()
    probe_samples, stop = [], threading.Event()

    def probe():
        probe_http = pool()
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                probe_http.request("GET", gw.url + "/api/v1/namespace?itemsPerPage=1",
                                   headers={"Authorization": "Bearer probe-user"})
                probe_samples.append(time.perf_counter() - t0)
            except urllib3.exceptions.HTTPError:
                probe_samples.append(float("inf"))
            stop.wait(0.02)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    pages, errors = [], {}
    deadline = time.monotonic() + budget
    asked = [(kind, sort, namespace, "ui") for kind in kinds
             for sort, namespace in FIRST_PAGES.get(kind, ())]
    asked += [(kind, sort, namespace, "selection") for kind in kinds
              for sort, namespace in FIRST_SELECTIONS.get(kind, ())]
    try:
        for kind, sort, namespace, road in asked:
            if time.monotonic() > deadline:
                break
            path = "/api/v1/%s%s?%s" % (kind, "/" + namespace if namespace else "",
                                        urllib.parse.urlencode(dict(PAGE, sortBy=sort)))
            times = []
            for _ in range(2):
                t0 = time.perf_counter()
                r = http.request("GET", gw.url + path,
                                 headers={"Authorization": "Bearer first-user"})
                times.append(time.perf_counter() - t0)
                if r.status != 200:
                    errors[str(r.status)] = errors.get(str(r.status), 0) + 1
            pages.append({"kind": kind, "sort": sort, "namespace": namespace,
                          "first_ms": ms(times[0]), "second_ms": ms(times[1]),
                          "road": road})
    finally:
        stop.set()
        thread.join(5)
    ui = [p for p in pages if p["road"] == "ui"]
    selections = [p for p in pages if p["road"] == "selection"]
    slowest = max(ui, key=lambda p: p["first_ms"]) if ui else {}
    selected = max(selections, key=lambda p: p["first_ms"]) if selections else {}
    return {"pages": pages, "max_first_ms": slowest.get("first_ms"),
            "slowest": "%s %s %s" % (slowest.get("kind"), slowest.get("sort"),
                                     slowest.get("namespace") or "all") if slowest else None,
            "selection_max_first_ms": selected.get("first_ms"),
            "selection_slowest": "%s %s" % (selected.get("kind"), selected.get("sort"))
            if selected else None,
            "max_second_ms": max((p["second_ms"] for p in ui), default=None),
            "probe_max_ms": ms(max(probe_samples)) if probe_samples else None,
            "probe_p99_ms": ms(pct(probe_samples, 0.99)), "probes": len(probe_samples),
            "errors": errors}


def other_pages(gw, kind, count, budget):
    http = pool()
    first, status = other_page(http, gw, kind)
    samples, errors = [], {}
    if status != 200:
        errors[str(status)] = 1
    deadline = time.monotonic() + budget
    for n in range(count):
        if n >= 3 and time.monotonic() > deadline:
            break
        seconds, status = other_page(http, gw, kind)
        if status == 200:
            samples.append(seconds)
        else:
            errors[str(status)] = errors.get(str(status), 0) + 1
    return {"first_ms": ms(first), "p50_ms": ms(statistics.median(samples)) if samples else None,
            "n": len(samples), "errors": errors}


def pod_events_pages(gw, count, budget):
    """The events sublist of one pod (``/api/v1/pod/{ns}/{name}/event``, the pod of the newest
    event on the event list's first page): p50 back to back, and the pod's events."""
    http = pool()
    r = http.request("GET", gw.url + "/api/v1/event?" + urllib.parse.urlencode(
        dict(PAGE, sortBy="d,lastSeen")), headers={"Authorization": "Bearer other-user"})
    events = json.loads(r.data).get("events") or [] if r.status == 200 else []
    pods = [e for e in events if e.get("objectKind") == "Pod"]
    if not pods:
        return {"errors": {"no pod event": 1}}
    path = "/api/v1/pod/%s/%s/event" % (pods[0]["objectNamespace"], pods[0]["objectName"])
    samples, errors, found = [], {}, None
    deadline = time.monotonic() + budget
    for n in range(count):
        if n >= 3 and time.monotonic() > deadline:
            break
        t0 = time.perf_counter()
        r = http.request("GET", gw.url + path, headers={"Authorization": "Bearer other-user"})
        if r.status == 200:
            samples.append(time.perf_counter() - t0)
            found = json.loads(r.data).get("listMeta", {}).get("totalItems")
        else:
            errors[str(r.status)] = errors.get(str(r.status), 0) + 1
    return {"p50_ms": ms(statistics.median(samples)) if samples else None, "n": len(samples),
            "events": found, "errors": errors}


def cache_counts(gw, kind):
    """(objects held, watch events applied) of a cached kind, from /metrics."""
    text = pool().request("GET", gw.url + "/metrics").data.decode()
    found = {}
    for name in ("dashboard_cache_objects", "dashboard_cache_events_applied"):
        for line in text.splitlines():
            if line.startswith(name + "{") and 'kind="%s"' % kind in line:
                found[name] = int(float(line.split()[-1]))
    return found.get("dashboard_cache_objects"), found.get("dashboard_cache_events_applied")


def sequential(gw, sort, count, gap, budget):
    http = pool()
    samples, errors = [], {}
    deadline = time.monotonic() + budget
    for n in range(count):
        if n >= 3 and time.monotonic() > deadline:
            break
        seconds, status, _ = page(http, gw, "seq-user", sort)
        if status == 200:
            samples.append(seconds)
        else:
            errors[str(status)] = errors.get(str(status), 0) + 1
        if gap:
            time.sleep(gap)
    return {"p50_ms": ms(statistics.median(samples)) if samples else None,
            "n": len(samples), "errors": errors}


def clients(gw, sort, seconds, count=CLIENTS, processes=1):
    """``count`` clients paging for ``seconds``, each with its own token and connection: threads
    of this process, or spread over ``processes`` processes (then this process's GIL, which
    the 64 threads share, is not in their latencies: --client-processes)."""
    if processes > 1:
        return _clients_in_processes(gw, sort, seconds, count, processes)
    results = [[] for _ in range(count)]
    barrier = threading.Barrier(count)
    deadline = [0.0]

    def client(k):
        http = pool()
        barrier.wait(60)
        while time.monotonic() < deadline[0]:
            try:
                took, status, _ = page(http, gw, "client-%02d" % k, sort)
            except urllib3.exceptions.HTTPError as exc:
                results[k].append((None, type(exc).__name__))
                continue
            results[k].append((took, status))

    deadline[0] = time.monotonic() + seconds + min(5, seconds)
    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(count)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 240)
    wall = time.perf_counter() - t0
    return _clients_result([r for rs in results for r in rs], wall)


def _clients_result(flat, wall):
    ok = [s for s, status in flat if status == 200]
    errors = {}
    for _, status in flat:
        if status != 200:
            errors[str(status)] = errors.get(str(status), 0) + 1
    return {"p50_ms": ms(pct(ok, 0.5)), "p95_ms": ms(pct(ok, 0.95)),
            "max_ms": ms(max(ok) if ok else None), "rps": round(len(ok) / wall, 1),
            "requests": len(flat), "errors": errors}


def _clients_in_processes(gw, sort, seconds, count, processes):
    """The clients as threads of ``processes`` spawned processes: once every process is ready
    (imports done), all start at one time (the monotonic clock is the machine's) and page
    until one deadline."""
    context = multiprocessing.get_context("spawn")
    ready, results, go = context.Queue(), context.Queue(), context.Event()
    start = context.Value("d", 0.0)
    shares = [count // processes + (1 if i < count % processes else 0) for i in range(processes)]
    children = [context.Process(target=_client_process, daemon=True, args=(
        gw.url, sort, first, share, seconds, ready, go, start, results))
        for first, share in zip(itertools.accumulate([0] + shares[:-1]), shares) if share]
    flat = []
    try:
        for child in children:
            child.start()
        for _ in children:
            ready.get(timeout=120)
        start.value = time.monotonic() + 0.2
        go.set()
        for _ in children:
            flat += results.get(timeout=seconds + 240)
    finally:
        for child in children:
            child.join(10)
            if child.is_alive():
                child.kill()
    return _clients_result(flat, seconds)


def _client_process(url, sort, first, count, seconds, ready, go, start, results):
    """One process's clients (numbered from ``first``): [(seconds, status)] put on ``results``."""
    gw = types.SimpleNamespace(url=url)
    found = [[] for _ in range(count)]
    ready.put(first)
    go.wait(120)

    def client(k):
        http = pool()
        time.sleep(max(0.0, start.value - time.monotonic()))
        while time.monotonic() < start.value + seconds:
            try:
                took, status, _ = page(http, gw, "client-%02d" % (first + k), sort)
            except urllib3.exceptions.HTTPError as exc:
                found[k].append((None, type(exc).__name__))
                continue
            found[k].append((took, status))

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 240)
    results.put([r for rs in found for r in rs])


def cpu_seconds(pid):
    """User + system CPU seconds of a process."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def search_once(http, gw, token, query, per_page=10):
    """(seconds, status or "no page", totalItems) of one search."""
    t0 = time.perf_counter()
    r = http.request("GET", gw.url + "/api/v1/search?" + urllib.parse.urlencode(
        {"q": query, "itemsPerPage": str(per_page)}), headers={"Authorization": "Bearer " +
                                                               token})
    seconds = time.perf_counter() - t0
    if r.status != 200:
        return seconds, r.status, None
    body = json.loads(r.data)
    total = body["listMeta"]["totalItems"]
    ok = len(body["items"]) == min(per_page, total)
    return seconds, 200 if ok else "no page", total


def search_back_to_back(gw, query, count, budget):
    """One client searching ``query`` back to back: the first search apart (it builds the
    filtered indexes later ones read), then p50/p95, the matches, and the gateway's CPU per
    search over those."""
    http = pool()
    first, status, total = search_once(http, gw, "search-user", query)
    samples, errors = [], {}
    if status != 200:
        errors[str(status)] = 1
    cpu = cpu_seconds(gw.proc.pid)
    deadline = time.monotonic() + budget
    for n in range(count):
        if n >= 3 and time.monotonic() > deadline:
            break
        seconds, status, total = search_once(http, gw, "search-user", query)
        if status == 200:
            samples.append(seconds)
        else:
            errors[str(status)] = errors.get(str(status), 0) + 1
    cpu = cpu_seconds(gw.proc.pid) - cpu
    return {"query": query, "first_ms": ms(first), "p50_ms": ms(pct(samples, 0.5)),
            "p95_ms": ms(pct(samples, 0.95)), "n": len(samples), "matches": total,
            "cpu_ms_per_search": ms(cpu / max(1, len(samples) + len(errors))),
            "errors": errors}


def searches_beside(gw, stop, out):
    """SEARCH_RATE searches a second, SEARCHES in turn, until ``stop``: their latencies."""
    http = pool()
    samples, errors = [], {}
    queries = itertools.cycle(SEARCHES.values())
    gap = 1.0 / SEARCH_RATE
    due = time.monotonic()
    while not stop.is_set():
        due += gap
        try:
            seconds, status, _ = search_once(http, gw, "search-beside", next(queries))
        except urllib3.exceptions.HTTPError as exc:
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            continue
        if status == 200:
            samples.append(seconds)
        else:
            errors[str(status)] = errors.get(str(status), 0) + 1
        stop.wait(max(0.0, due - time.monotonic()))
    out.update({"p50_ms": ms(pct(samples, 0.5)), "p95_ms": ms(pct(samples, 0.95)),
                "max_ms": ms(max(samples) if samples else None), "n": len(samples),
                "errors": errors})


def search_phases(gw, args, out):
    """--search: each query back to back, the combined one per kind, then the 64 clients by
    creation with and without SEARCH_RATE searches a second beside them."""
    quick = args.quick
    for name, query in SEARCHES.items():
        out["search_" + name] = search_back_to_back(gw, query, 5 if quick else 40, 60)
        log("search %s: %s" % (name, out["search_" + name]))
    per_kind = out["search_by_kind"] = {}
    for _path, _route, _key, kind in KINDS:
        found = search_back_to_back(gw, SEARCHES["combined"] + " kind:" + kind,
                                    3 if quick else 20, 30)
        per_kind[kind] = {"p50_ms": found["p50_ms"], "matches": found["matches"],
                          "errors": found["errors"]}
    log("the combined search per kind: %s" % per_kind)
    count = 8 if quick else CLIENTS
    out["search_clients_without"] = clients(gw, "creation", args.clients_seconds, count=count,
                                            processes=args.client_processes)
    stop, beside = threading.Event(), {}
    thread = threading.Thread(target=searches_beside, args=(gw, stop, beside), daemon=True)
    thread.start()
    try:
        out["search_clients_with"] = clients(gw, "creation", args.clients_seconds, count=count,
                                             processes=args.client_processes)
    finally:
        stop.set()
        thread.join(60)
    out["search_beside_clients"] = beside
    without, with_ = out["search_clients_without"]["rps"], out["search_clients_with"]["rps"]
    out["search_clients_rps_ratio"] = round(with_ / without, 2) if without else None
    log("64 clients by creation without / with %s searches a second: %s / %s req/s; the "
        "searches: %s" % (SEARCH_RATE, without, with_, beside))


def gateway_restarts(gw):
    text = pool().request("GET", gw.url + "/metrics").data.decode()
    for line in text.splitlines():
        if line.startswith(('dashboard_cache_watch_restarts_total{',
                            'dashboard_cache_watch_restarts{')) and 'kind="pod"' in line:
            return float(line.split()[-1])
    return 0.0


def heap_report(gw, timeout=10.0):
    """Where the gateway's memory is (its SIGUSR1 test hook, cache/heap.py's ``report``):
    the C allocator's heap, in use and free, its mapped blocks, and Python's allocator's
    arenas: their total, the bytes of their blocks in use and of their free blocks, in MiB.
    None when the report did not come within ``timeout`` seconds."""
    with open(gw.log_path, "rb") as f:
        f.seek(0, 2)
        start = f.tell()
    os.kill(gw.proc.pid, signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.2)
        with open(gw.log_path, "rb") as f:
            f.seek(start)
            text = f.read().decode("utf-8", "replace")
        found = re.search(r"memory: (\{[^}]*\})", text)
        if found is None:
            continue
        out = ast.literal_eval(found.group(1))
        for label, key in (("arenas allocated current", "pymalloc_arenas"),
                           ("bytes in allocated blocks", "pymalloc_in_use_mib"),
                           ("bytes in available blocks", "pymalloc_free_blocks_mib")):
            number = re.search(r"# %s\s*=\s*([\d,]+)" % label, text)
            if number is not None:
                value = int(number.group(1).replace(",", ""))
                out[key] = value if key == "pymalloc_arenas" else round(value / 2 ** 20, 1)
        if "pymalloc_arenas" in out:   # arenas of 1 MiB (Python 3.10 and later)
            out["pymalloc_empty_pools_mib"] = round(
                out["pymalloc_arenas"] - out.get("pymalloc_in_use_mib", 0)
                - out.get("pymalloc_free_blocks_mib", 0), 1)
        return out
    return None


def _heap_cell(rss, heap):
    if not heap:
        return "%s; no report" % rss
    return "%s; %s + %s; %s + %s + %s" % (
        rss, heap.get("malloc_in_use_mib"), heap.get("malloc_free_mib"),
        heap.get("pymalloc_in_use_mib"), heap.get("pymalloc_free_blocks_mib"),
        heap.get("pymalloc_empty_pools_mib"))


def soak(gw, standin, seconds, directory, budget, clients_count=8, every=30.0, flags=(),
         tree=None):
    """Issue #41's soak: ``seconds`` at the run's churn with ``clients_count`` clients paging
    (each sort of SORTS in turn, one page a second each), a forced 410 (every kind re-lists)
    at half time; VmRSS every ``every`` seconds. Growth: over the whole run, and over its last
    half (from the sample at half time, the re-list's peak after it let go, to the last); and
    ``fresh_beside``'s split at the end."""
    samples, errors = [], {}
    done = threading.Event()

    def client(k):
        http = pool()
        sorts = list(SORTS)
        n = 0
        while not done.is_set():
            try:
                _s, status, _r = page(http, gw, "soak-%d" % k, sorts[n % len(sorts)])
            except urllib3.exceptions.HTTPError as exc:
                status = type(exc).__name__
            if status != 200:
                errors[str(status)] = errors.get(str(status), 0) + 1
            n += 1
            done.wait(1.0)

    threads = [threading.Thread(target=client, args=(k,), daemon=True)
               for k in range(clients_count)]
    for thread in threads:
        thread.start()
    heaps = []   # (seconds, RSS, heap_report) at the start, before the re-list and at the end

    def report(elapsed):
        heaps.append((round(elapsed), round(memory(gw.proc.pid)[0] or 0), heap_report(gw)))
        log("soak %ds: RSS %s MiB, heap %s" % heaps[-1])

    report(0)
    started = time.monotonic()
    relisted = False
    try:
        while True:
            elapsed = time.monotonic() - started
            samples.append((round(elapsed), round(memory(gw.proc.pid)[0] or 0)))
            log("soak %ds: RSS %s MiB" % samples[-1])
            if elapsed >= seconds:
                break
            if not relisted and elapsed >= seconds / 2:
                report(elapsed)
                standin.admin("expire")
                relisted = True
            time.sleep(min(every, max(0.0, seconds - elapsed)))
        report(time.monotonic() - started)
        fresh = fresh_beside(gw, standin, directory, budget, flags, tree)
        log("soak: a fresh gateway beside it %s" % fresh)
    finally:
        done.set()
        for thread in threads:
            thread.join(10)
    half = next((rss for t, rss in samples if t >= seconds / 2 + every), samples[-1][1])
    return {"seconds": seconds, "rss_mib": samples, "errors": errors, "heaps": heaps,
            "growth_mib": samples[-1][1] - samples[0][1],
            "last_half_growth_mib": samples[-1][1] - half, "fresh": fresh}


def fresh_beside(gw, standin, directory, budget, flags=(), tree=None):
    """Splits a soak's growth into the cluster's and the gateway's: a second gateway started
    against the stand-in as the soak left it, ready and asked a page of each sort the soak's
    clients ask (their indexes built, as in the soaked one), its RSS beside the soaked one's at
    the same moment, and both heap reports (``heap_report``: the allocators, the pools' and
    layouts' entries). What the cluster itself grew (its objects larger or more) is in both;
    what the soaked gateway holds beyond the fresh one is its own (churned records, the
    allocators, pools, indexes, caches). ``flags``, ``tree``: the soaked gateway's own."""
    fresh = start_gateway(standin, directory, flags, root=tree)
    try:
        wait_ready(fresh, budget)
        http = pool()
        for sort in SORTS:
            page(http, fresh, "soak-fresh", sort)
        time.sleep(2)
        return {"fresh_rss_mib": round(memory(fresh.proc.pid)[0] or 0),
                "soaked_rss_mib": round(memory(gw.proc.pid)[0] or 0),
                # where each one's memory is, the pools' and layouts' entries among it
                "fresh_heap": heap_report(fresh), "soaked_heap": heap_report(gw)}
    except (RuntimeError, urllib3.exceptions.HTTPError) as exc:   # said; the soak is kept
        return {"error": str(exc)[:200]}
    finally:
        fresh.stop()


def after_410(gw, standin, budget, watchers=8):
    """A forced 410; the next page (a new caller's); pages by ``watchers`` clients until the
    re-list is done. The clients are users at work when the 410 comes: each has had a page
    before it (a re-list is met by the people already using the gateway; a new caller's first
    page in the re-list's first second is the next page's figure)."""
    for k in range(watchers):
        page(pool(), gw, "relist-%d" % k, "creation")
    before = standin.stats()
    restarts = gateway_restarts(gw)
    standin.admin("expire")
    t0 = time.perf_counter()
    http = pool()
    took, status, resp = page(http, gw, "after-410", "creation")
    result = {"next_page_ms": ms(took), "next_page_status": status,
              "next_page_cache_age": resp.headers.get("X-Dashboard-Cache-Age")}
    samples, errors, ages = [], {}, []
    done = threading.Event()
    deadline = time.monotonic() + budget

    def client(k):
        h = pool()
        while not done.is_set() and time.monotonic() < deadline:
            try:
                s, st, r = page(h, gw, "relist-%d" % k, "creation")
            except urllib3.exceptions.HTTPError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            if st == 200:
                samples.append(s)
                age = r.headers.get("X-Dashboard-Cache-Age")
                if age is not None:
                    ages.append(float(age))
            else:
                errors[str(st)] = errors.get(str(st), 0) + 1
            time.sleep(0.1)

    threads = [threading.Thread(target=client, args=(k,), daemon=True)
               for k in range(watchers)]
    for t in threads:
        t.start()
    # re-listed: the gateway counted a restart and the stand-in served a complete pod LIST
    while time.monotonic() < deadline:
        now = standin.stats()
        if now["pod_lists_completed"] > before["pod_lists_completed"] and \
                gateway_restarts(gw) > restarts:
            break
        time.sleep(0.2)
    relisted = time.perf_counter() - t0
    time.sleep(1.0)
    done.set()
    for t in threads:
        t.join(200)
    after = standin.stats()
    pages = after["pod_list_pages"] - before["pod_list_pages"]
    result.update({
        "relist_s": round(relisted, 1), "pages_during": len(samples),
        "max_ms": ms(max(samples) if samples else None),
        "p50_ms": ms(pct(samples, 0.5)), "errors": errors,
        "max_cache_age_s": max(ages) if ages else None,
        "standin_list_pages": pages,
        "standin_list_mib": round((after["list_bytes"] - before["list_bytes"]) / 2**20, 1),
        "pod_lists_completed": after["pod_lists_completed"] - before["pod_lists_completed"]})
    return result


def run_rate(standin, rate, args, directory, reference, reference_cpu_s=None):
    log("churn %s/s: starting a gateway" % rate)
    standin.admin("churn", rate=rate)
    gw = start_gateway(standin, directory, args.gateway_flag, root=args.gateway_tree)
    sampler = Sampler(gw.proc.pid)
    out = {"rate": rate}
    try:
        early = {}
        early_thread = threading.Thread(target=first_page_while_syncing,
                                        args=(gw, early, args.budget), daemon=True)
        t0 = time.perf_counter()
        cpu0 = cpu_seconds(gw.proc.pid), cpu_seconds(standin.proc.pid)
        early_thread.start()
        kinds_ready = {}
        wait_ready(gw, args.budget, kinds_ready)
        ready = time.perf_counter() - t0
        # The gateway is what start-up waits for (its one interpreter lock busy throughout):
        # its CPU to ready against the reference's, a ready ratio that counts no waiting
        cpu = [cpu_seconds(pid) - before for pid, before in zip(
            (gw.proc.pid, standin.proc.pid), cpu0)]
        out["ready_cpu_s"] = {"gateway": round(cpu[0], 1), "standin": round(cpu[1], 1)}
        out["ready_cpu_ratio"] = round(cpu[0] / reference_cpu_s, 2) if reference_cpu_s else None
        out["ready_s"] = round(ready, 1)
        out["kinds_ready_s"] = kinds_ready
        out["ready_ratio"] = round(ready / reference, 2)
        out["rss_ready_mib"] = round(memory(gw.proc.pid)[0] or 0)
        phases = out["rss_phases_mib"] = {}   # (VmRSS, VmHWM) after each phase: where the peak is

        def phase(name):
            phases[name] = [round(v or 0) for v in memory(gw.proc.pid)]
        phase("ready")
        # Ready means ready (issue #41): the pages the web UI opens first, from the first
        # second after /readyz said so, before anything else warms the gateway. Pods alone
        # sit on 100 nodes, 1,500 a node (Kubernetes' limit is 110): a node page's sums of
        # its nodes' pods are not a node page of any real cluster, so only the composition
        # (30 pods a node) asks for nodes.
        out["first_pages"] = first_pages(
            gw, [k for _p, _r, _k, k in KINDS] if args.composition else ["pod"], args.budget)
        log("first pages after ready: %s" % {k: v for k, v in out["first_pages"].items()
                                             if k != "pages"})
        for entry in out["first_pages"]["pages"]:
            log("  %(kind)s %(sort)s %(namespace)s: %(first_ms)s ms, then %(second_ms)s ms"
                % entry)
        phase("first_pages")
        early_thread.join(args.budget)
        out["page_while_first_sync"] = early
        log("ready in %.1fs (%.2fx), RSS %s MiB; early page %s" % (
            ready, ready / reference, out["rss_ready_mib"], early))
        log("CPU to ready: gateway %(gateway)s s, stand-in %(standin)s s" % out["ready_cpu_s"]
            + "; the gateway's against the reference's %s s: %sx" % (
                reference_cpu_s, out["ready_cpu_ratio"]))
        quick = args.quick
        if args.composition:
            held = cache_counts(gw, "event")
            for kind in OTHER_PAGES:
                out["page_" + kind] = other_pages(gw, kind, 5 if quick else 40, 60)
                log("%s page: %s" % (kind, out["page_" + kind]))
            out["page_pod_events"] = pod_events_pages(gw, 5 if quick else 40, 60)
            log("a pod's events: %s" % out["page_pod_events"])
        time.sleep(0 if quick else 2)
        for sort in SORTS:
            out["page_" + sort] = {
                "back_to_back": sequential(gw, sort, 5 if quick else 40, 0, 60),
                "spaced_0.25s": sequential(gw, sort, 3 if quick else 20, 0.25, 60)}
            log("page by %s: %s" % (sort, out["page_" + sort]))
        phase("pages")
        if args.search:
            search_phases(gw, args, out)
            phase("search")
        out["clients16_creation"] = clients(gw, "creation", args.clients_seconds,
                                            count=4 if quick else 16,
                                            processes=args.client_processes)
        log("16 clients by creation: %s" % out["clients16_creation"])
        phase("clients16")
        for sort in SORTS:
            out["clients_" + sort] = clients(gw, sort, args.clients_seconds,
                                             count=8 if quick else CLIENTS,
                                             processes=args.client_processes)
            log("64 clients by %s: %s" % (sort, out["clients_" + sort]))
            phase("clients64_" + sort)
        out["deny"] = page(pool(), gw, "deny-me", "creation")[1]
        if args.composition:   # events arrive and expire: as many held, every one applied
            now = cache_counts(gw, "event")
            out["events_held"] = {"ready": held[0], "end": now[0],
                                  "applied_meanwhile": (now[1] or 0) - (held[1] or 0)}
            log("events held: %s" % out["events_held"])
        out["after_410"] = after_410(gw, standin, args.budget, watchers=2 if quick else 8)
        log("after 410: %s" % out["after_410"])
        for _ in range(args.relists - 1):   # more samples of a re-list's worst page
            time.sleep(RELIST_GAP)
            out.setdefault("more_410", []).append(
                after_410(gw, standin, args.budget, watchers=2 if quick else 8))
            log("after 410 again: %s" % out["more_410"][-1])
        phase("relist")
        if args.soak_seconds:
            out["soak"] = soak(gw, standin, args.soak_seconds, directory, args.budget,
                               every=min(30.0, max(1.0, args.soak_seconds / 20)),
                               flags=args.gateway_flag, tree=args.gateway_tree)
            log("soak: %s" % {k: v for k, v in out["soak"].items() if k not in ("rss_mib", "heaps")})
            phase("soak")
        log("RSS / high-water mark after each phase (MiB): %s" % phases)
        out["rss_end_mib"] = round(memory(gw.proc.pid)[0] or 0)
        out["rss_peak_mib"] = round(max(memory(gw.proc.pid)[1] or 0, sampler.peak))
    finally:
        sampler.stop()
        gw.stop()
    log("churn %s/s done: peak %s MiB" % (rate, out.get("rss_peak_mib")))
    return out


def sidecar_phase(standin, directory, args, scrapes=3):
    """The metrics sidecar against the stand-in's metrics.k8s.io and pods: seconds of each
    scrape (its own log line) and its RSS after each, and its peak; the seconds of its pod
    watch's first LIST and from start to its first scrape; and from its /healthz, the LISTs of
    pods it made (one, the watch's, when scrapes read the watched pods)."""
    [port] = free_ports(1)
    log_file = tempfile.NamedTemporaryFile(prefix="sidecar-scale-", suffix=".log", delete=False)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "metrics_sidecar", "--kubeconfig", standin.kubeconfig(directory),
         "--bind-address", "127.0.0.1", "--port", str(port), "--metric-resolution",
         "%gs" % args.sidecar_resolution,
         "-v", "1"], cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT)
    sampler = Sampler(proc.pid)
    out = {"scrape_s": [], "rss_after_scrape_mib": []}
    deadline = time.monotonic() + args.budget * 2
    try:
        seen = 0
        while time.monotonic() < deadline and len(out["scrape_s"]) < scrapes:
            if proc.poll() is not None:
                raise RuntimeError("sidecar exited:\n" + open(log_file.name).read()[-3000:])
            text = open(log_file.name).read().splitlines()
            lines = [line for line in text if "scraped" in line and "pod containers in" in line]
            for line in text:
                if "watch_list_s" not in out and "kept after a LIST of" in line:
                    out["watch_list_s"] = float(line.split(" of ")[-1].split("s")[0])
                    out["watch_rss_mib"] = round(memory(proc.pid)[0] or 0)
            for line in lines[seen:]:
                out["scrape_s"].append(float(line.rsplit(" in ", 1)[1].rstrip("s")))
                out["rss_after_scrape_mib"].append(round(memory(proc.pid)[0] or 0))
                out["containers"] = int(line.split(" and ")[1].split()[0])
                out.setdefault("first_scrape_after_s", round(time.monotonic() - started, 1))
            seen = len(lines)
            time.sleep(0.2)
        out["rss_peak_mib"] = round(max(memory(proc.pid)[1] or 0, sampler.peak))
        try:
            health = json.loads(urllib3.PoolManager(retries=False, timeout=10).request(
                "GET", "http://127.0.0.1:%d/healthz" % port).data)
            out["pod_lists"] = health.get("podLists")
            out["pods_kept"] = [w.get("kept") for w in health.get("podWatches") or ()]
        except (urllib3.exceptions.HTTPError, ValueError) as exc:
            out["health_error"] = str(exc)
    finally:
        sampler.stop()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    log("sidecar: %s" % out)
    return out


def reference_kinds(standin, result):
    """The reference over every kind of the composition, and the cache's bytes per object of
    each (on a sample of the listed objects): the reference's seconds, all kinds."""
    result["kinds"] = {}
    total = 0.0
    result["reference_cpu_s"] = 0.0
    for path, _route, _key, kind in KINDS:
        cpu = reference_cpu(standin)
        seconds, count, sample = reference_list(standin.url, path=path, sample=2000)
        cpu = reference_cpu(standin) - cpu
        per = bytes_per_object(kind, sample)
        total += seconds
        result["reference_cpu_s"] += cpu
        result["kinds"][kind] = {"objects": count, "reference_s": round(seconds, 2),
                                 "reference_cpu_s": round(cpu, 2),
                                 "json_bytes_per_object": round(reference_list.bytes
                                                                / max(1, count)),
                                 "cache_bytes_per_object": per,
                                 "cache_mib": round(per * count / 2**20, 1) if per else None}
        log("reference %s: %d in %.2fs; cached ~%s bytes each" % (kind, count, seconds, per))
    return total


def reference_cpu(standin):
    """CPU seconds so far of what the reference runs on: the stand-in serving its LIST and this
    process decoding it (nothing else runs here meanwhile). Beside the reference's seconds, its
    CPU: a machine whose neighbours take its cores moved wall-clock ratios between runs by 20%
    (issue #41); CPU time moves too, with what they do to its caches, but the gateway's and
    the reference's are then counted alike."""
    return time.process_time() + cpu_seconds(standin.proc.pid)


def table(result):
    ref = result["reference_s"]
    rates = result["rates"]
    head = "| | " + " | ".join("%s changes/s" % r["rate"] for r in rates) + " |"
    lines = [head, "|---|" + "---|" * len(rates)]

    def row(name, fn):
        cells = []
        for r in rates:
            try:
                cells.append(fn(r))
            except (KeyError, TypeError):
                cells.append("-")
        lines.append("| %s | %s |" % (name, " | ".join(cells)))

    row("start to /readyz", lambda r: "%.1f s (%.2fx the reference %.1f s)" % (
        r["ready_s"], r["ready_ratio"], ref))
    row("CPU to /readyz: the gateway's; against the reference's (stand-in and json)",
        lambda r: "%.1f s; %.2fx (%.1f s)" % (r["ready_cpu_s"]["gateway"], r["ready_cpu_ratio"],
                                              result["reference_cpu_s"]))
    row("RSS at ready / peak", lambda r: "%s / %s MiB" % (r["rss_ready_mib"],
                                                          r["rss_peak_mib"]))
    row("first pages after ready (UI's first lists and sorts): slowest first answer; "
        "slowest second; a probe's max / p99 meanwhile", lambda r: "%s ms (%s); %s ms; %s / %s ms"
        % (r["first_pages"]["max_first_ms"], r["first_pages"]["slowest"],
           r["first_pages"]["max_second_ms"], r["first_pages"]["probe_max_ms"],
           r["first_pages"]["probe_p99_ms"]))
    row("a sort no index holds, asked first (FIRST_SELECTIONS): slowest first answer",
        lambda r: "%s ms (%s)" % (r["first_pages"].get("selection_max_first_ms"),
                                  r["first_pages"].get("selection_slowest")))
    if result.get("composition"):
        row("each kind synced after (s)", lambda r: ", ".join(
            "%s %s" % (k, v) for k, v in sorted(r["kinds_ready_s"].items(), key=lambda x: x[1])
            if k in result["kinds"]))
        for kind in OTHER_PAGES:
            row("%s list page: first after ready / p50" % kind, lambda r, k=kind: "%s / %s ms%s"
                % (r["page_" + k]["first_ms"], r["page_" + k]["p50_ms"],
                   (", errors %s" % r["page_" + k]["errors"]) if r["page_" + k]["errors"]
                   else ""))
    if result.get("composition"):
        row("a pod's events sublist p50 (its events)", lambda r: "%s ms (%s)" % (
            r["page_pod_events"]["p50_ms"], r["page_pod_events"]["events"]))
        row("events held at ready / at the end (events applied meanwhile)",
            lambda r: "%s / %s (%s)" % (r["events_held"]["ready"], r["events_held"]["end"],
                                        r["events_held"]["applied_meanwhile"]))
    for sort in SORTS:
        row("one page p50, by %s (back to back / 0.25 s apart)" % sort,
            lambda r, s=sort: "%s / %s ms" % (r["page_" + s]["back_to_back"]["p50_ms"],
                                             r["page_" + s]["spaced_0.25s"]["p50_ms"]))
    row("16 clients by creation: p50/p95/max, req/s, errors", lambda r: "%s/%s/%s ms, %s "
        "req/s, %s" % (r["clients16_creation"]["p50_ms"], r["clients16_creation"]["p95_ms"],
                       r["clients16_creation"]["max_ms"], r["clients16_creation"]["rps"],
                       r["clients16_creation"]["errors"] or "none"))
    for sort in SORTS:
        row("64 clients by %s: p50/p95/max, req/s, errors" % sort,
            lambda r, s=sort: "%s/%s/%s ms, %s req/s, %s" % (
                r["clients_" + s]["p50_ms"], r["clients_" + s]["p95_ms"],
                r["clients_" + s]["max_ms"], r["clients_" + s]["rps"],
                r["clients_" + s]["errors"] or "none"))
    row("after every watch gets 410: next page; re-list; pages meanwhile max; non-200; "
        "LIST pages served", lambda r: "%s ms (%s); %s s; %s ms; %s; %s pages %s MiB" % (
            r["after_410"]["next_page_ms"], r["after_410"]["next_page_status"],
            r["after_410"]["relist_s"], r["after_410"]["max_ms"],
            r["after_410"]["errors"] or "none", r["after_410"]["standin_list_pages"],
            r["after_410"]["standin_list_mib"]))
    if any(r.get("more_410") for r in rates):
        row("further forced re-lists, %s s apart: re-list; pages meanwhile max" % RELIST_GAP,
            lambda r: ", ".join("%s s; %s ms" % (a["relist_s"], a["max_ms"])
                                for a in r.get("more_410", ())))
    if any(r.get("soak") for r in rates):
        row("soak: seconds; RSS start -> end; growth in the last half (after the re-list at "
            "half time)", lambda r: "%s s; %s -> %s MiB; %+d MiB" % (
                r["soak"]["seconds"], r["soak"]["rss_mib"][0][1], r["soak"]["rss_mib"][-1][1],
                r["soak"]["last_half_growth_mib"]))
        row("soak: at its end, the soaked gateway's RSS beside a fresh gateway's against the "
            "cluster as the soak left it (the gateway's own growth, and the cluster's)",
            lambda r: "%s / %s MiB" % (r["soak"]["fresh"].get("soaked_rss_mib"),
                                       r["soak"]["fresh"].get("fresh_rss_mib"))
            if "fresh_rss_mib" in r["soak"].get("fresh", {}) else
            str(r["soak"].get("fresh", {}).get("error")))
        row("soak: where the memory is (start / before the re-list / end): RSS; C heap in use + "
            "free; Python's arenas: blocks in use + free blocks + empty pools (MiB)",
            lambda r: " / ".join(_heap_cell(rss, h) for _t, rss, h in r["soak"].get("heaps", ())))
    row("a page asked while the cache first syncs", lambda r: "%s after %s s (200 after %s s)"
        % (r["page_while_first_sync"].get("status"),
           r["page_while_first_sync"].get("first_answer_s"),
           r["page_while_first_sync"].get("to_200_s")))
    if result.get("search"):
        for name in SEARCHES:
            row("search %s `%s`: p50/p95 (first), matches, CPU a search" % (
                name, SEARCHES[name]), lambda r, n=name: "%s/%s ms (%s), %s, %s ms%s" % (
                    r["search_" + n]["p50_ms"], r["search_" + n]["p95_ms"],
                    r["search_" + n]["first_ms"], r["search_" + n]["matches"],
                    r["search_" + n]["cpu_ms_per_search"],
                    (", errors %s" % r["search_" + n]["errors"]) if r["search_" + n]["errors"]
                    else ""))
        row("the combined search per kind: p50 (matches)", lambda r: ", ".join(
            "%s %s ms (%s)" % (k, v["p50_ms"], v["matches"])
            for k, v in r["search_by_kind"].items()))
        row("%g searches a second beside 64 clients: p50/p95/max, errors" % SEARCH_RATE,
            lambda r: "%s/%s/%s ms, %s" % (
                r["search_beside_clients"]["p50_ms"], r["search_beside_clients"]["p95_ms"],
                r["search_beside_clients"]["max_ms"],
                r["search_beside_clients"]["errors"] or "none"))
        row("64 clients by creation without / with the searches: req/s (ratio), p95",
            lambda r: "%s / %s req/s (%sx), %s / %s ms" % (
                r["search_clients_without"]["rps"], r["search_clients_with"]["rps"],
                r["search_clients_rps_ratio"], r["search_clients_without"]["p95_ms"],
                r["search_clients_with"]["p95_ms"]))
        row("RSS / high-water mark after the search phases", lambda r: "%s / %s MiB" % tuple(
            r["rss_phases_mib"]["search"]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue #19 benchmark at scale")
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--rates", default="0,200", help="churn rates, changes a second")
    parser.add_argument("--clients-seconds", type=float, default=10.0)
    parser.add_argument("--client-processes", type=int, default=1,
                        help="spread the clients' threads over this many processes (1, the "
                             "figures so far: one process, whose GIL the 64 threads share, "
                             "caps them near 900 req/s on a 2-core machine)")
    parser.add_argument("--budget", type=float, default=300.0,
                        help="bound of each waiting phase, seconds")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--quick", action="store_true",
                        help="a few requests per phase and 8 clients (the smoke test)")
    parser.add_argument("--composition", action="store_true",
                        help="the whole cluster of issue #30 beside the pods, not pods only")
    parser.add_argument("--gateway-flag", action="append", default=[],
                        help="a flag added to the gateway's (repeatable), e.g. "
                             "--gateway-flag=--access-cache-max-age=0")
    parser.add_argument("--gateway-tree", metavar="CHECKOUT",
                        help="run the gateway from another checkout of the project (with this "
                             "one's interpreter and packages): two builds on one stand-in")
    parser.add_argument("--search", action="store_true",
                        help="also measure GET /api/v1/search (issue #38): each query back to "
                             "back, per kind, and beside the 64 clients")
    parser.add_argument("--relists", type=int, default=1,
                        help="forced re-lists of every kind, one after the other (each one's "
                        "slowest page is reported)")
    parser.add_argument("--soak-seconds", type=float, default=0,
                        help="after the other phases, this long at the churn rate with 8 "
                             "clients paging and a forced re-list at half time, RSS sampled "
                             "(issue #41: 3600)")
    parser.add_argument("--light", action="store_true",
                        help="the stand-in's lighter objects of issue #30 (no managedFields, "
                             "no mesh proxy); the default is as heavy as a real cluster's "
                             "(issue #41, tests/bench/heavy.py)")
    parser.add_argument("--sidecar", action="store_true",
                        help="also measure the metrics sidecar's scrapes (--rates '' for only "
                             "that)")
    parser.add_argument("--sidecar-resolution", type=float, default=15.0,
                        help="the sidecar's --metric-resolution, seconds (its scrapes are this "
                             "far apart; the smoke test shortens it)")
    args = parser.parse_args(argv)
    result = {"pods": args.pods, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "composition": args.composition, "search": args.search,
              "gateway_flags": args.gateway_flag, "gateway_tree": args.gateway_tree}
    standin = StandIn(args.pods, max_seconds=3 * 3600, composed=args.composition,
                      light=args.light)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-scale-") as directory:
            if args.composition:
                seconds = reference_kinds(standin, result)
            else:
                cpu = reference_cpu(standin)
                seconds, count = reference_list(standin.url)
                result["reference_cpu_s"] = reference_cpu(standin) - cpu
                assert count == args.pods, count
                result["pod_json_bytes"] = round(reference_list.bytes / max(1, count))
                log("reference LIST of %d pods (%d bytes each) in pages of 1,000 with json: "
                    "%.2fs" % (count, result["pod_json_bytes"], seconds))
            result["reference_s"] = round(seconds, 2)
            result["reference_cpu_s"] = round(result["reference_cpu_s"], 2)
            result["rates"] = [run_rate(standin, float(rate), args, directory, seconds,
                                        result["reference_cpu_s"])
                               for rate in args.rates.split(",") if rate]
            if args.sidecar:
                standin.admin("churn", rate=0)
                result["sidecar"] = sidecar_phase(standin, directory, args)
            stats = standin.stats()
            result["standin"] = {k: stats[k] for k in ("watches", "watches_with_bookmarks",
                                                       "bookmarks_sent", "gone_sent",
                                                       "access_reviews", "refused")}
    finally:
        standin.stop()
    result["table"] = table(result) if result.get("rates") else ""
    if result.get("kinds"):
        result["table"] += "\n\n| kind | objects | JSON bytes/object | reference LIST | " \
            "cached bytes/object | cached (estimate) |\n|---|---|---|---|---|---|\n" + \
            "\n".join("| %s | %s | %s | %s s | %s | %s MiB |" % (
                k, v["objects"], v["json_bytes_per_object"], v["reference_s"],
                v["cache_bytes_per_object"], v["cache_mib"]) for k, v in result["kinds"].items())
    if result.get("sidecar"):
        side = result["sidecar"]
        result["table"] += "\n\nmetrics sidecar: scrapes %s s; RSS after each %s MiB; peak %s MiB" \
            % (side["scrape_s"], side["rss_after_scrape_mib"], side.get("rss_peak_mib"))
        result["table"] += "\n(pod watch: first LIST %s s, RSS then %s MiB; first scrape %s s " \
            "after start; pod LISTs made %s)" % (side.get("watch_list_s"),
                                                 side.get("watch_rss_mib"),
                                                 side.get("first_scrape_after_s"),
                                                 side.get("pod_lists"))
    return report(result, args.json)


def report(result, path):
    """Prints the result's table and writes the whole result as JSON to ``path``, if any."""
    print(result["table"])
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=2)
    return result


if __name__ == "__main__":
    main()
