"""Metrics in lists and details: the decorators of the list pipeline (listing.DECORATORS and
listing.DETAIL_DECORATORS), installed at start-up with the process's sidecar client.

A list page of a kind with ``metrics`` (pods, workloads, nodes) asked for ``metricNames``
gets, per item, ``metrics: {name: Metric}`` and, on the envelope, ``cumulativeMetrics``: one
Metric per (name x aggregation) over the page's items. The page's items are expanded to pods
(a workload's pods are those it controls: owner references, through the replica sets for a
deployment; one pod LIST per namespace of the page, never one per item) and the sidecar is asked
once per namespace per metric for all of them (nodes: once per metric). Pod and node details get
``metrics: [Metric]`` (the requested names, else cpu and memory usage, as upstream shows them;
``[]`` and a ``warning`` when those defaults cannot be had, as upstream).

When metrics cannot be had (integration off, sidecar failing its health check, or failing the
request) the response is still a 200: items carry ``metrics: null`` and the envelope a
``warning`` saying why. With --web-ui-compat, a list asked for without ``metricNames`` gets upstream's
standard metrics in upstream's shapes (metrics/webui.py), as the upstream web UI expects. Only the periodic check's verdict is used to skip the sidecar: a check per
request would let any caller drive traffic to it.
"""

import asyncio
import logging
import urllib.parse

import ujson

from dashboard_api import kinds, listing
from dashboard_api.errors import ApiError, is_forbidden
from dashboard_api.metrics import names as metric_names, webui
from dashboard_api.metrics.aggregate import aggregated, metric, summed
from dashboard_api.reads import Namespaces
from dashboard_api.summaries import workloads
from dashboard_api.summaries.common import Related

log = logging.getLogger("dashboard_api.metrics")

NAMES_PER_REQUEST = 200   # keeps a sidecar URL well under its 64 KiB header limit
OWNED = ("replicaset", "replicationcontroller", "daemonset", "statefulset", "job")


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
        if self.shared is not None:
            return await self.shared.get(path, self._ask_sidecar)
        return await self._ask_sidecar(path)

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

    async def __call__(self, fetch, kind, page, envelope, query):
        names = query.metric_names
        # The web UI's standard metrics, unless metrics are off (then nobody asked for any).
        upstream = self.shared is not None and not names and self.sidecar is not None
        if upstream:
            names = webui.STANDARD
        if not kind.metrics or not names or not page:
            return
        try:
            self._usable()
            members = await self._members(fetch, kind, page)
            wanted = sorted({metric_names.canonical(n) for n in names})
            found = dict(zip(wanted, await asyncio.gather(
                *(self._series(kind, members, name) for name in wanted))))
        except Unavailable as why:
            for item in page:
                if not upstream or "metrics" in item:
                    item["metrics"] = None
            envelope["warning"] = str(why)
            return
        per_item = {id(item): {n: summed([found[metric_names.canonical(n)].get(p, {})
                                          for p in parts]) for n in names}
                    for item, parts in zip(page, members)}
        if upstream:
            webui.attach(page, [per_item[id(i)] for i in page], envelope)
            return
        for item, parts in zip(page, members):
            item["metrics"] = {n: metric(n, per_item[id(item)][n], self._label(kind, item, parts))
                               for n in query.metric_names}
        cumulative_label = self._list_label(kind, page)
        envelope["cumulativeMetrics"] = [
            metric(n, aggregated([per_item[id(i)][n] for i in page], how), cumulative_label, how)
            for n in query.metric_names for how in query.aggregations]

    async def _series(self, kind, members, name):
        keys = {p for parts in members for p in parts}
        if kind.name == "node":
            return await self.node_series(keys, name)
        return await self.pod_series(keys, name)

    async def _members(self, fetch, kind, page):
        """Per page item, the keys of its series: [(namespace, pod)] or [node name]."""
        if kind.name == "node":
            return [[item["objectMeta"]["name"]] for item in page]
        if kind.name == "pod":
            return [[(item["objectMeta"].get("namespace", ""), item["objectMeta"]["name"])]
                    for item in page]
        namespaces = Namespaces(sorted({item["objectMeta"].get("namespace", "")
                                        for item in page}))
        try:
            reads = [fetch.list(kinds.get("pod"), namespaces)]
            if kind.name == "deployment":
                reads.append(fetch.list(kinds.get("replicaset"), namespaces))
            results = await asyncio.gather(*reads)
        except ApiError as exc:
            if not is_forbidden(exc):
                raise
            fetch.forbidden(exc)
            raise Unavailable("the pods of these %s objects cannot be read: %s"
                              % (kind.name, exc.message)) from None
        rel = Related(pods=results[0])
        if kind.name == "deployment":
            rel["replicasets"] = results[1]
        # The summaries' own joins: from the watch cache they are index lookups, not a scan of
        # every pod of the namespaces.
        pods_of = workloads.deployment_pods if kind.name == "deployment" \
            else workloads.owned_pods
        members = []
        for item in page:
            owner = {"metadata": {"uid": item["objectMeta"].get("uid")}}
            members.append([((pod.get("metadata") or {}).get("namespace", ""),
                             pod["metadata"]["name"]) for pod in pods_of(owner, rel)])
        return members

    @staticmethod
    def _label(kind, item, parts):
        meta = item["objectMeta"]
        if kind.name == "node":
            return {"node": [meta["name"]]}
        label = {"namespace": [meta.get("namespace", "")],
                 "pod": sorted(pod for _, pod in parts)}
        if kind.name != "pod":
            label[kind.name] = [meta["name"]]
        return label

    @staticmethod
    def _list_label(kind, page):
        label = {kind.name: [i["objectMeta"]["name"] for i in page]}
        if kind.namespaced:
            label["namespace"] = sorted({i["objectMeta"].get("namespace", "") for i in page})
        return label

    # -- details ----------------------------------------------------------------------------

    async def detail(self, fetch, kind, obj, out, query):
        if kind.name not in ("pod", "node"):
            return
        if self.sidecar is None and not query.metric_names:
            return  # nobody asked, and there is nothing to ask
        wanted = query.metric_names or metric_names.DEFAULT
        meta = obj.get("metadata") or {}
        key = meta.get("name") if kind.name == "node" else (meta.get("namespace", ""),
                                                               meta.get("name"))
        try:
            self._usable()
            if kind.name == "node":
                found = await asyncio.gather(*(self.node_series([key], metric_names.canonical(n))
                                               for n in wanted))
            else:
                found = await asyncio.gather(*(self.pod_series([key], metric_names.canonical(n))
                                               for n in wanted))
        except Unavailable as why:
            # Asked for: null, as the specification says; shown by default: upstream's [].
            out["metrics"] = None if query.metric_names else []
            out["warning"] = str(why)
            return
        if self.shared is not None and not query.metric_names:   # the web UI's units
            out["metrics"] = [webui.detail_metric(n, series.get(key, {}))
                              for n, series in zip(webui.STANDARD, found)]
            return
        label = ({"node": [meta.get("name")]} if kind.name == "node"
                 else {"namespace": [meta.get("namespace", "")], "pod": [meta.get("name")]})
        out["metrics"] = [metric(n, series.get(key, {}), label)
                          for n, series in zip(wanted, found)]


def install(sidecar, web_ui=False):
    """Puts the decorators of ``sidecar`` (None: metrics off) into the list pipeline,
    replacing any installed before; ``web_ui``: --web-ui-compat."""
    decorator = MetricsDecorator(sidecar, web_ui)
    listing.DECORATORS[:] = [d for d in listing.DECORATORS
                             if not isinstance(d, MetricsDecorator)] + [decorator]
    listing.DETAIL_DECORATORS[:] = [d for d in listing.DETAIL_DECORATORS
                                    if getattr(d, "__self__", None).__class__
                                    is not MetricsDecorator] + [decorator.detail]
    return decorator
