"""The periodic scrape: metrics.k8s.io/v1beta1 nodes and pods, joined with the pods' facts.

Every ``--metric-resolution`` (the first one at start-up) the scraper reads, with the sidecar's
own identity from ``--kubeconfig`` (else the in-cluster service account):

- ``NodeMetrics`` of every node, when the sidecar covers every namespace (as upstream);
- ``PodMetrics`` of each configured namespace (``""`` = all);

and joins them with the pods' facts (podfacts.py: the containers' requests and limits for the
``cpu/request``... metrics, the pods' UIDs and the claims they mount; a node's request and limit
are the sums over the pods scheduled on it). The facts are kept by LIST+WATCH (podwatch.py), so
a scrape lists no pods; while they are not kept (the first LIST is under way: the first scrape
waits for it; or the watch is forbidden) the scrape LISTs the pods itself, as it always did.

The HTTP calls block and run in a small thread pool (api.py), as does the JSON decoding and
the join; the event loop only awaits them. A failed scrape (unreachable server, an error status
such as 403, a body that is not what the metrics API sends) is logged and the next period tries
again: nothing stored is lost and the sidecar keeps serving.
"""

import asyncio
import logging
import sys
import time

from metrics_sidecar import units
from metrics_sidecar.api import ScrapeError
from metrics_sidecar.podfacts import NO_RESOURCES, list_facts, pod_facts
from metrics_sidecar.podwatch import PodWatch
from metrics_sidecar.store import Scrape

log = logging.getLogger("metrics_sidecar.scraper")

METRICS = "/apis/metrics.k8s.io/v1beta1"


def _path(namespace, base):
    return "%s/namespaces/%s/pods" % (base, namespace) if namespace else base + "/pods"


class PodUsage(tuple):
    """(namespace, name, ((container, cpu nanocores, memory bytes), ...)): what a scrape keeps
    of a PodMetrics item, made in the thread that decoded its page (the decoded items of 150,000
    pods would be ~400 MB of dicts; these are a tenth of that)."""

    __slots__ = ()


def pod_usage(item):
    """The PodUsage of a decoded PodMetrics item (or of a PodUsage); None when malformed."""
    if isinstance(item, PodUsage) or item is None:
        return item
    try:
        meta = item["metadata"]
        containers = []
        for c in item.get("containers") or ():
            usage = c.get("usage") or {}
            containers.append((sys.intern(c["name"]), units.nanocores(usage.get("cpu", "0")),
                               units.bytes_(usage.get("memory", "0"))))
        return PodUsage((sys.intern(meta["namespace"]), meta["name"], tuple(containers)))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        log.warning("skipped a malformed PodMetrics entry: %s", exc)
        return None


def build(node_metrics, pod_metrics, pods):
    """A Scrape from the three decoded lists (pure; malformed entries are skipped);
    ``pod_metrics`` are PodMetrics items or their ``pod_usage``, ``pods`` pod objects or their
    ``pod_facts``."""
    by_namespace, claims = {}, []
    for facts in map(pod_facts, pods):
        if facts is not None:
            by_namespace.setdefault(facts[0], {})[facts[1]] = facts
    rows = []
    for usage in map(pod_usage, pod_metrics):
        if usage is None:
            continue
        namespace, name, containers = usage
        facts = by_namespace.get(namespace, {}).get(name)
        uid, resources = (facts[2], facts[4]) if facts is not None else (None, {})
        for container, cpu, memory in containers:
            rows.append((namespace, name, uid, container, cpu, memory)
                        + resources.get(container, NO_RESOURCES))
    per_node, sums = {}, {}
    for pods_of_namespace in by_namespace.values():
        for facts in pods_of_namespace.values():
            namespace, name, _, node, resources, mounted = facts
            for claim in mounted:
                claims.append((namespace, claim, name))
            if node:
                # Pods of one template share their resources dict: summed once per scrape.
                summed = sums.get(id(resources))
                if summed is None:
                    summed = sums[id(resources)] = [sum(r[i] for r in resources.values())
                                                    for i in range(4)]
                total = per_node.setdefault(node, [0, 0, 0, 0])
                for i in range(4):
                    total[i] += summed[i]
    nodes = []
    for item in node_metrics:
        try:
            name = item["metadata"]["name"]
            usage = item["usage"]
            nodes.append((name, units.nanocores(usage.get("cpu", "0")),
                          units.bytes_(usage.get("memory", "0")))
                         + tuple(per_node.get(name, NO_RESOURCES)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("skipped a malformed NodeMetrics entry: %s", exc)
    return Scrape(nodes, rows, claims)


class Scraper:
    def __init__(self, api, store, namespaces=("",), resolution=60.0, watch_pods=True):
        self.api = api
        self.store = store
        self.namespaces = list(namespaces)
        self.resolution = resolution
        self.watches = {ns: PodWatch(api, ns) for ns in self.namespaces} if watch_pods else {}
        self.scrapes = 0
        self.failures = 0
        self.last_error = None
        self.last_seconds = None
        self.last_success = None    # time.monotonic() of the last scrape stored
        self.last_scrape_at = None  # Unix time of the newest scrape stored (its points' x)
        self.next_scrape_at = None  # time.monotonic() the next scrape starts (now: under way)
        self._task = None

    async def pods(self, namespace):
        """The facts of the pods of ``namespace``: the watch's when it keeps them, else (not
        watched, or the watch is forbidden) a LIST of this scrape's own."""
        watch = self.watches.get(namespace)
        if watch is not None:
            await watch.settled.wait()   # the first scrape does not list beside the watch
            kept = watch.kept()
            if kept is not None:
                return kept
        facts, _ = await list_facts(self.api, namespace)
        return facts

    async def read(self):
        """The three lists of one scrape, read concurrently."""
        nodes = self.api.list(METRICS + "/nodes") if self.namespaces == [""] else _nothing()
        metrics = asyncio.gather(*(self.api.list(_path(ns, METRICS), keep=pod_usage)
                                   for ns in self.namespaces))
        pods = asyncio.gather(*(self.pods(ns) for ns in self.namespaces))
        node_items, metric_parts, pod_parts = await asyncio.gather(nodes, metrics, pods)
        return (node_items, [i for part in metric_parts for i in part],
                [p for part in pod_parts for p in part])

    def status(self):
        """What /healthz tells the token holder about the pods' facts, and how old the newest
        stored scrape is (while the API server is away, the window kept is served as is)."""
        age = None if self.last_success is None else time.monotonic() - self.last_success
        return {"podLists": self.api.pod_lists,
                "podWatches": [w.status() for w in self.watches.values()],
                "lastSuccessAgeSeconds": None if age is None else round(age, 3),
                # What the stored answers are as of, and for how long at least: they change
                # only when a scrape is stored, and none is before the next one starts (the
                # gateway's list validators compare them; metrics/sidecar.py there).
                "lastScrapeAt": self.last_scrape_at,
                "nextScrapeInSeconds": None if self.next_scrape_at is None else
                max(0.0, round(self.next_scrape_at - time.monotonic(), 3))}

    async def scrape(self):
        """One scrape; True when it was stored. Failures are logged, never raised."""
        started = time.monotonic()
        now = time.time()
        try:
            node_items, metric_items, pods = await self.read()
            scrape = await asyncio.wrap_future(self.api.pool.submit(
                build, node_items, metric_items, pods))
            del node_items, metric_items, pods   # not held while the rows are written
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
        self.last_success = time.monotonic()
        self.last_scrape_at = now
        self.last_seconds = self.last_success - started
        log.info("scraped %d nodes and %d pod containers in %.3fs", len(scrape.nodes),
                 len(scrape.pods), self.last_seconds)
        return True

    async def _loop(self):
        while True:
            started = self.next_scrape_at = time.monotonic()
            await self.scrape()
            wait = max(0.0, self.resolution - (time.monotonic() - started))
            self.next_scrape_at = time.monotonic() + wait
            await asyncio.sleep(wait)

    def start(self):
        for watch in self.watches.values():
            watch.start()
        self._task = asyncio.get_running_loop().create_task(self._loop())

    def stop(self):
        for watch in self.watches.values():
            watch.stop()
        if self._task is not None:
            self._task.cancel()
            self._task = None


async def _nothing():
    return []
