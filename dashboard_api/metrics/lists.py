"""Metrics in lists and details: a decorator of the list pipeline (``MetricsDecorator`` for
lists, its ``detail`` for details), given to lists.pipeline.Pipeline at start-up with the process's
sidecar client (server.make_pipeline).

A list page of a kind whose spec has ``metrics`` (kinds/members.py: pods, workloads, nodes)
asked for ``metricNames`` gets, per item, ``metrics: {name: Metric}`` and, on the envelope,
``cumulativeMetrics``: one Metric per (name x aggregation) over the page's items. The page's
items are expanded to their series as the spec's ``Members`` says (a workload's pods are those
it controls, joined over the pods and replica sets the list already read: no LIST of its own)
and the sidecar is asked once per namespace per metric for all of them (nodes: once per
metric). Pod and node details get
``metrics: [Metric]`` (the requested names, else cpu and memory usage, as upstream shows them;
``[]`` and a ``warning`` when those defaults cannot be had, as upstream).

When metrics cannot be had (integration off, sidecar failing its health check, or failing the
request) the response is still a 200: items carry ``metrics: null`` and the envelope a
``warning`` saying why. Only the periodic check's verdict is used to skip the sidecar: a check per
request would let any caller drive traffic to it.

What a list's metrics depend on (``version``, for the list's validator, lists/validators.py):
nothing when it carries none; the verdict and its reason when the sidecar is not used; else
the sidecar's newest scrape (metrics/sidecar.py ``epoch``), and the answers shared between
callers are shared within one epoch only, so a page is never older than the epoch its
validator names. A sidecar request that fails during a page sets ``fetch.unversioned``.
"""

import asyncio
import logging
import urllib.parse

import ujson

from dashboard_api.metrics import webui
from dashboard_api.metrics.aggregate import aggregated, metric, summed
from dashboard_api.query import metricnames as metric_names
from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api.metrics")

NAMES_PER_REQUEST = 200   # keeps a sidecar URL well under its 64 KiB header limit


class Unavailable(Exception):
    """Why a response carries no metrics."""


def _quote(text):
    return urllib.parse.quote(text, safe="")


def _chunks(names):
    names = sorted(set(names))
    return [names[i:i + NAMES_PER_REQUEST] for i in range(0, len(names), NAMES_PER_REQUEST)]


class MetricsDecorator:
    def __init__(self, sidecar, web_ui=False):
        self.sidecar = sidecar
        # --web-ui-compat: upstream's standard metrics and shapes when no metricNames is given
        # (metrics/webui.py), and sidecar answers shared between callers for a few seconds.
        self.shared = webui.SharedAnswers() if web_ui else None

    # -- reading the sidecar ----------------------------------------------------------------

    def _usable(self):
        if self.sidecar is None:
            raise Unavailable("metrics are disabled (--metrics-provider none or --proxy)")
        if not self.sidecar.healthy:
            raise Unavailable("the metrics sidecar is unavailable: %s"
                              % (self.sidecar.last_error or "not checked yet"))

    async def _ask(self, path):
        if self.shared is not None:   # shared within the newest scrape known, no longer
            return await self.shared.get((path, self.sidecar.known_epoch),
                                         lambda _key: self._ask_sidecar(path))
        return await self._ask_sidecar(path)

    def _names(self, kind, query):
        """(the metric names a list of ``kind`` carries, whether upstream's standard ones)."""
        names = query.metric_names
        # The web UI's standard metrics, unless metrics are off (then nobody asked for any).
        upstream = self.shared is not None and not names and self.sidecar is not None
        if upstream:
            names = webui.STANDARD
        return (names if kind.metrics is not None else ()), upstream

    def stamp(self):
        """What this decorator's additions depend on as known now, without asking anyone
        (live/hub.py compares it between two looks)."""
        sidecar = self.sidecar
        if sidecar is None:
            return None
        return (sidecar.healthy, sidecar.last_error, sidecar.known_epoch)

    async def refresh(self):
        """Learns the sidecar's newest scrape when it may have changed (one question at a
        time, metrics/sidecar.py ``epoch``)."""
        if self.sidecar is not None and self.sidecar.healthy:
            await self.sidecar.epoch()

    def version_now(self, kind, query):
        """``version`` as it stands, without asking the sidecar (None when its newest scrape
        may have changed meanwhile): a validator made earlier still holds while this is
        what it was (lists/validators.py ``Recent``)."""
        names, _ = self._names(kind, query)
        if not names:
            return ()
        try:
            self._usable()
        except Unavailable as why:
            return ("unavailable", str(why))
        epoch = self.sidecar.current_epoch()
        return None if epoch is None else ("scrape", epoch)

    async def version(self, fetch, kind, query, rel):
        """What this decorator's additions to a list depend on (see the module docstring);
        None when that cannot be known now."""
        names, _ = self._names(kind, query)
        if not names:
            return ()
        try:
            self._usable()
            self._readable(fetch, kind)
        except Unavailable as why:
            found = ("unavailable", str(why))
        else:
            epoch = await self.sidecar.epoch()
            found = None if epoch is None else ("scrape", epoch)
        fetch.promised["metrics"] = found   # what the page must then show (``__call__``)
        return found

    async def _ask_sidecar(self, path):
        """{name: {x: y}} of one sidecar request."""
        try:
            status, body = await self.sidecar.get(path)
        except ApiError as exc:
            raise Unavailable(exc.message) from None
        if status != 200:
            raise Unavailable("the metrics sidecar answered %d to %s" % (status, path))
        try:
            items = ujson.loads(body).get("items") or []
            return {item["uids"][0]: {int(p["x"]): p["y"] for p in item.get("dataPoints") or ()}
                    for item in items}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise Unavailable("the metrics sidecar answered a malformed body to %s" % path) \
                from None

    async def pod_series(self, pods, name):
        """{(namespace, pod): {x: y}} for ``pods`` [(namespace, pod)]: one request per
        namespace (per NAMES_PER_REQUEST pods)."""
        by_ns = {}
        for ns, pod in pods:
            by_ns.setdefault(ns, []).append(pod)
        asks = [(ns, "/api/v1/dashboard/namespaces/%s/pod-list/%s/metrics/%s"
                 % (_quote(ns), ",".join(_quote(p) for p in chunk), name))
                for ns, names in by_ns.items() for chunk in _chunks(names)]
        answers = await asyncio.gather(*(self._ask(path) for _, path in asks))
        return {(ns, pod): series for (ns, _), answer in zip(asks, answers)
                for pod, series in answer.items()}

    async def node_series(self, nodes, name):
        asks = ["/api/v1/dashboard/nodes/%s/metrics/%s"
                % (",".join(_quote(n) for n in chunk), name) for chunk in _chunks(nodes)]
        out = {}
        for answer in await asyncio.gather(*(self._ask(path) for path in asks)):
            out.update(answer)
        return out

    # -- lists ------------------------------------------------------------------------------

    async def __call__(self, fetch, kind, page, envelope, query, rel):
        members = kind.metrics
        names, upstream = self._names(kind, query)
        if members is None or not names or not page:
            return
        promised = fetch.promised.get("metrics")
        try:
            self._usable()
            keys = self._members(fetch, kind, page, rel)
            wanted = sorted({metric_names.canonical(n) for n in names})
            found = dict(zip(wanted, await asyncio.gather(
                *(self._series(members.series, keys, name) for name in wanted))))
        except Unavailable as why:
            for item in page:
                if not upstream or "metrics" in item:
                    item["metrics"] = None
            envelope["warning"] = str(why)
            if promised != ("unavailable", str(why)):   # not what its version said
                fetch.unversioned = True
            return
        if promised is None or promised[0] != "scrape":
            fetch.unversioned = True   # the sidecar came back between version and page
        per_item = {id(item): {n: summed([found[metric_names.canonical(n)].get(p, {})
                                          for p in parts]) for n in names}
                    for item, parts in zip(page, keys)}
        if upstream:
            webui.attach(page, [per_item[id(i)] for i in page], envelope)
            return
        for item, parts in zip(page, keys):
            label = members.label(kind.name, item["objectMeta"], parts)
            item["metrics"] = {n: metric(n, per_item[id(item)][n], label)
                               for n in query.metric_names}
        cumulative_label = self._list_label(kind, page)
        envelope["cumulativeMetrics"] = [
            metric(n, aggregated([per_item[id(i)][n] for i in page], how), cumulative_label, how)
            for n in query.metric_names for how in query.aggregations]

    async def _series(self, series, keys, name):
        wanted = {p for parts in keys for p in parts}
        if series == "node":
            return await self.node_series(wanted, name)
        return await self.pod_series(wanted, name)

    @staticmethod
    def _members(fetch, kind, page, rel):
        """Per page item, the keys of its series, joined over the related objects the list
        read (``Members.needs``): no read of its own."""
        MetricsDecorator._readable(fetch, kind)
        return [kind.metrics.keys(item["objectMeta"], rel) for item in page]

    @staticmethod
    def _readable(fetch, kind):
        """Unavailable when a read the items' series are joined over was refused."""
        for key in kind.metrics.needs:
            refusal = fetch.refused.get(key)
            if refusal is not None:
                raise Unavailable("the pods of these %s objects cannot be read: %s"
                                  % (kind.name, refusal.message))

    @staticmethod
    def _list_label(kind, page):
        label = {kind.name: [i["objectMeta"]["name"] for i in page]}
        if kind.namespaced:
            label["namespace"] = sorted({i["objectMeta"].get("namespace", "") for i in page})
        return label

    # -- details ----------------------------------------------------------------------------

    async def detail(self, fetch, kind, obj, out, query):
        members = kind.metrics
        if members is None or not members.detail:
            return
        if self.sidecar is None and not query.metric_names:
            return  # nobody asked, and there is nothing to ask
        wanted = query.metric_names or metric_names.DEFAULT
        meta = obj.get("metadata") or {}
        keys = members.keys(meta, None)
        ask = self.node_series if members.series == "node" else self.pod_series
        try:
            self._usable()
            found = await asyncio.gather(*(ask(keys, metric_names.canonical(n))
                                           for n in wanted))
        except Unavailable as why:
            # Asked for: null, as the specification says; shown by default: upstream's [].
            out["metrics"] = None if query.metric_names else []
            out["warning"] = str(why)
            return
        if self.shared is not None and not query.metric_names:   # the web UI's units
            out["metrics"] = [webui.detail_metric(n, series.get(keys[0], {}))
                              for n, series in zip(webui.STANDARD, found)]
            return
        label = members.label(kind.name, meta, keys)
        out["metrics"] = [metric(n, series.get(keys[0], {}), label)
                          for n, series in zip(wanted, found)]
