"""A metrics.k8s.io/v1beta1 stand-in (what metrics-server serves), over plain HTTP on 127.0.0.1.

python -m tests.cluster.metrics_standin --apiserver URL --ca-file CA --token-file F --ready-file F

Usage is made up but deterministic: a function of the object's name and of time (10 s steps),
only for Running pods (their running containers) and existing nodes. A node's usage is its own
base load plus the usage of the pods running on it.

For a metrics client that also reads pods from "the API server" of its kubeconfig (the metrics
sidecar reads the pods' requests and limits), ``GET /api/v1/pods`` and
``/api/v1/namespaces/{ns}/pods`` are forwarded to the API server with the caller's own
Authorization header, so the API server's RBAC applies to the caller's identity (a WATCH of
them is passed on as it arrives).

Failure channels for tests: every route above is also served under ``/faults/{channel}``, and
``PUT /faults/{channel}`` with a body of ``normal``, ``garbage`` (200 with a body that is not
JSON) or ``forbidden`` (a 403 Status) switches how that channel answers. Channels start
``normal``; the unprefixed routes are never affected.
"""

import argparse
import asyncio
import hashlib
import json
import logging
import math
import os
import signal
import sys
import time

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application, RequestHandler

from tests.cluster.nodesim.apiclient import ApiClient, ApiError
from tests.cluster.nodesim.simulator import write_json_atomically

GROUP_VERSION = "metrics.k8s.io/v1beta1"
BASE = "/apis/" + GROUP_VERSION
STEP_SECONDS = 10
WINDOW = "30s"
PARENT_CHECK_SECONDS = 5

log = logging.getLogger("metrics-standin")


def sample_time(now=None):
    """Usage changes in steps: the start of the current step, in seconds."""
    now = time.time() if now is None else now
    return int(now) // STEP_SECONDS * STEP_SECONDS


def usage(key, t, cpu_range=(5, 205), memory_mib_range=(10, 260)):
    """(nanocores, bytes) for key at time t: a stable base per key, a slow wave over time."""
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    cpu_m = cpu_range[0] + seed % (cpu_range[1] - cpu_range[0])
    mem_mib = memory_mib_range[0] + (seed >> 20) % (memory_mib_range[1] - memory_mib_range[0])
    phase = (seed >> 40) % 360 * math.pi / 180
    cpu = cpu_m * 1_000_000 * (1 + 0.5 * math.sin(2 * math.pi * t / 120 + phase))
    memory = mem_mib * 1024 * 1024 * (1 + 0.1 * math.sin(2 * math.pi * t / 600 + phase))
    return int(cpu), int(memory) // 1024 * 1024


def _quantities(nanocores, memory):
    return {"cpu": "%dn" % nanocores, "memory": "%dKi" % (memory // 1024)}


def _stamp(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def container_usage(pod, t):
    """[(container name, nanocores, bytes)] for the running containers of a Running pod."""
    if (pod.get("status") or {}).get("phase") != "Running":
        return []
    running = {s["name"] for s in pod["status"].get("containerStatuses") or []
               if "running" in (s.get("state") or {})}
    meta = pod["metadata"]
    return [(c["name"],) + usage("%s/%s/%s" % (meta["namespace"], meta["name"], c["name"]), t)
            for c in pod["spec"]["containers"] if c["name"] in running]


def pod_metrics(pod, t):
    meta = pod["metadata"]
    return {"metadata": {"name": meta["name"], "namespace": meta["namespace"],
                         "selfLink": "%s/namespaces/%s/pods/%s" % (BASE, meta["namespace"],
                                                                   meta["name"]),
                         "creationTimestamp": _stamp(time.time())},
            "timestamp": _stamp(t), "window": WINDOW,
            "containers": [{"name": name, "usage": _quantities(cpu, mem)}
                           for name, cpu, mem in container_usage(pod, t)]}


def node_metrics(node, pods, t):
    name = node["metadata"]["name"]
    cpu, mem = usage("node/" + name, t, (100, 400), (500, 1500))
    for pod in pods:
        if pod["spec"].get("nodeName") == name:
            for _, c_cpu, c_mem in container_usage(pod, t):
                cpu, mem = cpu + c_cpu, mem + c_mem
    return {"metadata": {"name": name, "selfLink": "%s/nodes/%s" % (BASE, name),
                         "creationTimestamp": _stamp(time.time())},
            "timestamp": _stamp(t), "window": WINDOW, "usage": _quantities(cpu, mem)}


def _not_found(kind, name):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": '%s.metrics.k8s.io "%s" not found' % (kind, name), "reason": "NotFound",
            "details": {"name": name, "group": "metrics.k8s.io",
                        "kind": "pods" if kind == "podmetrics" else "nodes"},
            "code": 404}


FAULT_MODES = ("normal", "garbage", "forbidden")


def _forbidden(path):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": 'forbidden: the stand-in\'s fault channel refuses "get" on %s' % path,
            "reason": "Forbidden", "details": {}, "code": 403}


class MetricsHandler(RequestHandler):
    def initialize(self, api, faults=None, forward=None):
        self.api = api
        self.faults = faults      # None: an unprefixed route; else {channel: mode}
        self.forward = forward    # (apiserver URL, CA file) for the pods pass-through

    def _send(self, code, body):
        self.set_status(code)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body))

    def _selectors(self):
        return {k: self.get_query_argument(k) for k in ("labelSelector", "fieldSelector")
                if self.get_query_argument(k, None)}

    async def _running_pods(self, namespace=None, params=None):
        params = dict(params or {})
        selector = "status.phase=Running"
        params["fieldSelector"] = ",".join(filter(None, [params.get("fieldSelector"), selector]))
        path = "/api/v1/namespaces/%s/pods" % namespace if namespace else "/api/v1/pods"
        return (await self.api.call("GET", path, params=params))["items"]

    async def get(self, *args):
        if self.faults is not None:
            channel, args = args[0], args[1:]
            mode = self.faults.get(channel, "normal")
            if mode == "forbidden":
                return self._send(403, _forbidden(self.request.path))
            if mode == "garbage":
                self.set_header("Content-Type", "application/json")
                return self.finish(b"<html>this is not the metrics API {")
        try:
            await self._answer(*args)
        except ApiError as e:
            self._send(e.code if isinstance(e.code, int) else 500, e.body)
        except ConnectionError as e:
            self._send(503, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                             "status": "Failure", "message": str(e), "code": 503})


class NodesHandler(MetricsHandler):
    async def _answer(self, name=None):
        t = sample_time()
        pods = await self._running_pods()
        if name:
            try:
                node = await self.api.call("GET", "/api/v1/nodes/" + name)
            except ApiError as e:
                if e.code != 404:
                    raise
                return self._send(404, _not_found("nodemetrics", name))
            return self._send(200, dict(kind="NodeMetrics", apiVersion=GROUP_VERSION,
                                        **node_metrics(node, pods, t)))
        nodes = (await self.api.call("GET", "/api/v1/nodes", params=self._selectors()))["items"]
        self._send(200, {"kind": "NodeMetricsList", "apiVersion": GROUP_VERSION,
                         "metadata": {"selfLink": BASE + "/nodes"},
                         "items": [node_metrics(n, pods, t) for n in nodes]})


class PodsHandler(MetricsHandler):
    async def _answer(self, namespace=None, name=None):
        t = sample_time()
        if name:
            pods = await self._running_pods(namespace, {"fieldSelector": "metadata.name=" + name})
            if not pods:
                return self._send(404, _not_found("podmetrics", "%s/%s" % (namespace, name)))
            return self._send(200, dict(kind="PodMetrics", apiVersion=GROUP_VERSION,
                                        **pod_metrics(pods[0], t)))
        pods = await self._running_pods(namespace, self._selectors())
        link = BASE + ("/namespaces/%s/pods" % namespace if namespace else "/pods")
        self._send(200, {"kind": "PodMetricsList", "apiVersion": GROUP_VERSION,
                         "metadata": {"selfLink": link},
                         "items": [pod_metrics(p, t) for p in pods]})


class PodsPassThrough(MetricsHandler):
    """GET pods from the API server with the caller's Authorization header; a WATCH
    (``?watch=1``) is passed on as it arrives, line by line."""

    async def _answer(self, namespace=None):
        apiserver, ca_file = self.forward
        path = "/api/v1/namespaces/%s/pods" % namespace if namespace else "/api/v1/pods"
        query = ("?" + self.request.query) if self.request.query else ""
        headers = {"Accept": "application/json"}
        if self.request.headers.get("Authorization"):
            headers["Authorization"] = self.request.headers["Authorization"]
        if self.get_query_argument("watch", "") in ("1", "true"):
            return await self._watch(apiserver.rstrip("/") + path + query, headers, ca_file)
        try:
            resp = await AsyncHTTPClient().fetch(HTTPRequest(
                apiserver.rstrip("/") + path + query, headers=headers, ca_certs=ca_file,
                connect_timeout=5, request_timeout=60), raise_error=False)
        except (OSError, HTTPClientError) as e:
            raise ConnectionError(str(e)) from e
        if resp.code == 599:
            raise ConnectionError(str(resp.error))
        self.set_status(resp.code)
        self.set_header("Content-Type", "application/json")
        self.finish(resp.body)

    async def _watch(self, url, headers, ca_file):
        """The API server's status and each chunk as it comes. When the caller has gone, the
        next chunk ends the upstream watch too (a callback that raises closes it)."""
        status = {}

        def on_header(line):
            if line.startswith("HTTP/") and "code" not in status:
                status["code"] = int(line.split()[1])

        def on_chunk(chunk):
            if self.request.connection.stream.closed():
                raise ConnectionError("the watcher has gone")
            if not status.get("sent"):
                self.set_status(status.get("code", 200))
                self.set_header("Content-Type", "application/json")
                status["sent"] = True
            self.write(chunk)
            self.flush()

        timeout = float(self.get_query_argument("timeoutSeconds", "1800") or 1800)
        try:
            resp = await _watch_client().fetch(HTTPRequest(
                url, headers=headers, ca_certs=ca_file, connect_timeout=5,
                request_timeout=timeout + 30, header_callback=on_header,
                streaming_callback=on_chunk), raise_error=False)
        except (OSError, HTTPClientError) as e:
            raise ConnectionError(str(e)) from e
        if self.request.connection.stream.closed():
            return
        if not status.get("sent"):
            if resp.code == 599:
                raise ConnectionError(str(resp.error))
            self.set_status(resp.code)
        self.finish()


_WATCH = {}


def _watch_client():
    """The client of forwarded watches, which last minutes: never queued behind the other
    forwards (Tornado's shared client runs 10 at a time)."""
    if "client" not in _WATCH:
        _WATCH["client"] = AsyncHTTPClient(force_instance=True, max_clients=200)
    return _WATCH["client"]


class FaultControl(RequestHandler):
    def initialize(self, faults):
        self.faults = faults

    def put(self, channel):
        mode = self.request.body.decode().strip()
        if mode not in FAULT_MODES:
            self.set_status(400)
            return self.finish("mode must be one of %s\n" % ", ".join(FAULT_MODES))
        self.faults[channel] = mode
        self.finish(mode + "\n")


class DiscoveryHandler(RequestHandler):
    def get(self):
        verbs = ["get", "list"]
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": GROUP_VERSION,
            "resources": [{"name": "nodes", "singularName": "", "namespaced": False,
                           "kind": "NodeMetrics", "verbs": verbs},
                          {"name": "pods", "singularName": "", "namespaced": True,
                           "kind": "PodMetrics", "verbs": verbs}]}))


def make_app(api, forward=None):
    seg = r"([^/]+)"
    faults = {}
    routes = [(BASE, DiscoveryHandler), (r"/faults/" + seg, FaultControl, {"faults": faults})]
    for prefix, kw in (("", {"api": api, "forward": forward}),
                       (r"/faults/" + seg, {"api": api, "forward": forward, "faults": faults})):
        routes += [
            (prefix + BASE + "/nodes", NodesHandler, kw),
            (prefix + BASE + "/nodes/" + seg, NodesHandler, kw),
            (prefix + BASE + "/pods", PodsHandler, kw),
            (prefix + BASE + "/namespaces/" + seg + "/pods", PodsHandler, kw),
            (prefix + BASE + "/namespaces/" + seg + "/pods/" + seg, PodsHandler, kw),
        ]
        if forward is not None:
            routes += [(prefix + "/api/v1/pods", PodsPassThrough, kw),
                       (prefix + "/api/v1/namespaces/" + seg + "/pods", PodsPassThrough, kw)]
    return Application(routes)


async def main(args):
    with open(args.token_file) as f:
        api = ApiClient(args.apiserver, args.ca_file, f.read().strip(), "metrics-standin")
    sockets = bind_sockets(0, "127.0.0.1")
    server = HTTPServer(make_app(api, (args.apiserver, args.ca_file)))
    server.add_sockets(sockets)
    url = "http://127.0.0.1:%d" % sockets[0].getsockname()[1]
    write_json_atomically(args.ready_file, {"url": url, "pid": os.getpid()})
    log.info("serving %s on %s", GROUP_VERSION, url)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    parent = os.getppid()
    while not stop.is_set() and os.getppid() == parent:  # an orphan stops by itself
        try:
            await asyncio.wait_for(stop.wait(), PARENT_CHECK_SECONDS)
        except asyncio.TimeoutError:
            pass
    server.stop()
    api.close()


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m tests.cluster.metrics_standin")
    p.add_argument("--apiserver", required=True)
    p.add_argument("--ca-file", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--ready-file", required=True)
    return p.parse_args(argv)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s metrics-standin %(levelname)s: %(message)s")
    asyncio.run(main(parse_args(sys.argv[1:])))
