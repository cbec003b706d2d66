"""The periodic scrape: metrics.k8s.io/v1beta1 nodes and pods, plus the pods' resources.

Every ``--metric-resolution`` (the first one at start-up) the scraper reads, with the sidecar's
own identity from ``--kubeconfig`` (else the in-cluster service account):

- ``NodeMetrics`` of every node, when the sidecar covers every namespace (as upstream);
- ``PodMetrics`` of each configured namespace (``""`` = all);
- the pods themselves (``/api/v1/pods``, chunked), for the containers' requests and limits
  (``cpu/request``... metrics), the pods' UIDs and the claims they mount. A node's request and
  limit are the sums over the pods scheduled on it. Each page is reduced, in the thread that
  decoded it, to one small tuple per pod (``pod_facts``: names interned): at 150,000 pods a
  scrape never holds the decoded pods, only what it joins.

The HTTP calls block (the ``kubernetes`` package's urllib3 pool) and so run in a small thread
pool, as does the JSON decoding; the event loop only awaits them. A failed scrape (unreachable
server, an error status such as 403, a body that is not what the metrics API sends) is logged
and the next period tries again: nothing stored is lost and the sidecar keeps serving.
"""

import asyncio
import concurrent.futures
import copy
import logging
import sys
import time
import urllib.parse

import kubernetes.client
import kubernetes.config
import ujson
import urllib3

from metrics_sidecar import units
from metrics_sidecar.store import Scrape

log = logging.getLogger("metrics_sidecar.scraper")

METRICS = "/apis/metrics.k8s.io/v1beta1"
CHUNK = 500
MAX_CHUNKS = 1000
USER_AGENT = "metrics-sidecar"


class ScrapeError(Exception):
    pass


def load_config(kubeconfig=None):
    """The kubernetes Configuration of the sidecar's own identity; raises when unusable."""
    cfg = kubernetes.client.Configuration()
    if kubeconfig:
        kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    else:
        kubernetes.config.load_incluster_config(client_configuration=cfg)
    if not cfg.host:
        raise ValueError("no API server address")
    return cfg


class Api:
    """Blocking GETs that decode JSON, run in a pool of ``workers`` threads, through the urllib3
    pool the ``kubernetes`` package builds (client certificates, CA, proxy) with the bearer
    token of the configuration (refreshed by the loader's hook when it has one)."""

    def __init__(self, cfg, timeout=30.0, workers=2):
        self.cfg = cfg
        self.host = cfg.host.rstrip("/")
        cfg = copy.copy(cfg)
        cfg.connection_pool_maxsize = workers
        self.http = kubernetes.client.ApiClient(cfg).rest_client.pool_manager
        self.timeout = timeout
        self.pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="scrape")

    def _headers(self):
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        token = self.cfg.get_api_key_with_prefix("BearerToken", alias="authorization")
        if token:
            headers["Authorization"] = token
        return headers

    def _get(self, path, params, keep=None):
        url = self.host + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            response = self.http.request("GET", url, headers=self._headers(), retries=False,
                                         timeout=urllib3.Timeout(connect=min(10, self.timeout),
                                                                 read=self.timeout))
        except Exception as exc:  # urllib3 and socket errors of several types
            raise ScrapeError("GET %s failed: %s" % (path, exc)) from None
        if not 200 <= response.status < 300:
            raise ScrapeError("GET %s answered %s: %s" % (path, response.status,
                                                          _message(response.data)))
        try:
            body = ujson.loads(response.data)
        except ValueError:
            raise ScrapeError("GET %s answered a body that is not JSON" % path) from None
        if not isinstance(body, dict) or not isinstance(body.get("items"), list):
            raise ScrapeError("GET %s answered no list of items" % path)
        if keep is not None:
            body["items"] = [keep(item) for item in body["items"]]
        return body

    async def get(self, path, params=None, keep=None):
        return await asyncio.wrap_future(self.pool.submit(self._get, path, dict(params or {}),
                                                          keep))

    async def list(self, path, params=None, keep=None):
        """Every item of a list, in chunks of CHUNK; ``keep(item)`` (in the decoding thread)
        is what is kept of each."""
        items, params = [], dict(params or {}, limit=CHUNK)
        for _ in range(MAX_CHUNKS):
            body = await self.get(path, params, keep)
            items.extend(body["items"])
            token = (body.get("metadata") or {}).get("continue")
            if not token:
                return items
            params["continue"] = token
        raise ScrapeError("listing %s did not end" % path)

    def close(self):
        self.pool.shutdown(wait=False)
        self.http.clear()


def _message(body):
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return ujson.loads(body).get("message") or body[:200]
    except (ValueError, AttributeError, TypeError):
        return (body or "")[:200]


def _path(namespace, base):
    return "%s/namespaces/%s/pods" % (base, namespace) if namespace else base + "/pods"


def _resources(container):
    """(cpu_request, cpu_limit, memory_request, memory_limit) of a container spec."""
    res = container.get("resources") or {}
    req, lim = res.get("requests") or {}, res.get("limits") or {}
    out = []
    for quantities, key, convert in ((req, "cpu", units.nanocores), (lim, "cpu", units.nanocores),
                                     (req, "memory", units.bytes_),
                                     (lim, "memory", units.bytes_)):
        try:
            out.append(convert(quantities[key]) if key in quantities else 0)
        except ValueError:
            out.append(0)
    return tuple(out)


def _interned(value):
    return sys.intern(value) if isinstance(value, str) else value


class PodFacts(tuple):
    """What a scrape joins of one pod: (namespace, name, uid, node, {container: resources},
    (claim names))."""

    __slots__ = ()


def pod_facts(pod):
    if isinstance(pod, PodFacts):
        return pod
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    containers = {_interned(c.get("name")): _resources(c) for c in spec.get("containers") or ()}
    claims = tuple(claim for claim in ((v.get("persistentVolumeClaim") or {}).get("claimName")
                                       for v in spec.get("volumes") or ()) if claim)
    return PodFacts((_interned(meta.get("namespace")), meta.get("name"), meta.get("uid"),
                     _interned(spec.get("nodeName")), containers, claims))


def build(node_metrics, pod_metrics, pods):
    """A Scrape from the three decoded lists (pure; malformed entries are skipped); ``pods``
    are pod objects or their ``pod_facts``."""
    specs, claims, node_of = {}, [], {}
    for facts in map(pod_facts, pods):
        namespace, name, uid, node, containers, mounted = facts
        key = (namespace, name)
        specs[key] = (uid, containers)
        node_of[key] = node
        for claim in mounted:
            claims.append((namespace, claim, name))
    rows = []
    for item in pod_metrics:
        try:
            meta = item["metadata"]
            key = (meta["namespace"], meta["name"])
            uid, containers = specs.get(key, (None, {}))
            for c in item.get("containers") or ():
                usage = c.get("usage") or {}
                rows.append(key + (uid, c["name"], units.nanocores(usage.get("cpu", "0")),
                                   units.bytes_(usage.get("memory", "0")))
                            + containers.get(c["name"], (0, 0, 0, 0)))
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("skipped a malformed PodMetrics entry: %s", exc)
    per_node = {}
    for key, (_, containers) in specs.items():
        node = node_of.get(key)
        if node:
            total = per_node.setdefault(node, [0, 0, 0, 0])
            for res in containers.values():
                for i, value in enumerate(res):
                    total[i] += value
    nodes = []
    for item in node_metrics:
        try:
            name = item["metadata"]["name"]
            usage = item["usage"]
            nodes.append((name, units.nanocores(usage.get("cpu", "0")),
                          units.bytes_(usage.get("memory", "0")))
                         + tuple(per_node.get(name, (0, 0, 0, 0))))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("skipped a malformed NodeMetrics entry: %s", exc)
    return Scrape(nodes, rows, claims)


class Scraper:
    def __init__(self, api, store, namespaces=("",), resolution=60.0):
        self.api = api
        self.store = store
        self.namespaces = list(namespaces)
        self.resolution = resolution
        self.scrapes = 0
        self.failures = 0
        self.last_error = None
        self.last_seconds = None
        self._task = None

    async def read(self):
        """The three lists of one scrape, read concurrently."""
        nodes = self.api.list(METRICS + "/nodes") if self.namespaces == [""] else _nothing()
        metrics = asyncio.gather(*(self.api.list(_path(ns, METRICS)) for ns in self.namespaces))
        pods = asyncio.gather(*(self.api.list(_path(ns, "/api/v1"), {
            "fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}, keep=pod_facts)
            for ns in self.namespaces))
        node_items, metric_parts, pod_parts = await asyncio.gather(nodes, metrics, pods)
        return (node_items, [i for part in metric_parts for i in part],
                [p for part in pod_parts for p in part])

    async def scrape(self):
        """One scrape; True when it was stored. Failures are logged, never raised."""
        started = time.monotonic()
        now = time.time()
        try:
            node_items, metric_items, pods = await self.read()
            scrape = await asyncio.wrap_future(self.api.pool.submit(
                build, node_items, metric_items, pods))
            await self.store.write(scrape, now)
        except ScrapeError as exc:
            self.failures += 1
            self.last_error = str(exc)
            # No cull either: while the source is failing, what is stored is all there is.
            log.warning("scrape failed, trying again in %gs: %s", self.resolution, exc)
            return False
        except Exception as exc:  # noqa: BLE001 (nothing may stop the loop)
            self.failures += 1
            self.last_error = "%s: %s" % (type(exc).__name__, exc)
            log.exception("scrape failed, trying again in %gs", self.resolution)
            return False
        self.scrapes += 1
        self.last_error = None
        self.last_seconds = time.monotonic() - started
        log.info("scraped %d nodes and %d pod containers in %.3fs", len(scrape.nodes),
                 len(scrape.pods), self.last_seconds)
        return True

    async def _loop(self):
        while True:
            started = time.monotonic()
            await self.scrape()
            await asyncio.sleep(max(0.0, self.resolution - (time.monotonic() - started)))

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self._loop())

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None


async def _nothing():
    return []
