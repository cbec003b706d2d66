"""The sidecar's HTTP routes: stored series as ``{"items": [Metric...]}``.

Three path forms (the specification states all three), all answering the same Metric objects
(``metricName``, ``dataPoints`` [{x: ms, y}], ``metricPoints`` [{timestamp, value}], ``label``,
``aggregation`` "sum", ``uids`` = the object names, as upstream's gateway matches on them):

1. ``/api/v1/dashboard/{ns}/pod/{p1,p2...}/metrics/{metric}`` and
   ``/api/v1/dashboard/node/{n1,n2...}/metrics/{metric}``;
2. upstream's ``/api/v1/dashboard/nodes/{names}/metrics/{metric}[/{suffix}]`` and
   ``/api/v1/dashboard/namespaces/{ns}/pod-list/{names}/metrics/{metric}[/{suffix}]``
   (upstream's gateway sends ``metrics/cpu/usage_rate``: metric and suffix are read together);
3. ``/api/v1/node[/{node}]``, ``/api/v1/pod/{ns}[/{pod}[/{container}]]``, with
   ``?metricNames=a,b`` (default ``cpu/usage,memory/usage``), down to one container.

``POST /api/v1/download`` is the batch download: ``{"selectors": [{namespace, resourceType,
resourceName, uid}], "metricNames": [...]}`` with ``resourceType`` one of ``pod``, ``node``,
``persistentvolumeclaim``. A claim's series is, per scrape, the sum over the pods that mounted
it (the metrics API has no volume usage). ``uid``, when given, must match the stored pod UID.

A pod's value at a scrape is the sum over its containers. ``/healthz`` answers 200 while the
process serves. A path of no form is a JSON 404, an unknown metric name or bad body a 400.
"""

import datetime
import hmac
import json

import tornado.web

from metrics_sidecar import names as metric_names

RESOURCE_TYPES = ("pod", "node", "persistentvolumeclaim")
MAX_SELECTORS = 1000
MAX_NAMES = 5000


class HttpError(Exception):
    def __init__(self, code, reason, message):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message


def bad_request(message):
    return HttpError(400, "BadRequest", message)


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def metric(name, series, label, uid):
    """One Metric object from [(time seconds, value)]."""
    return {
        "metricName": name,
        "dataPoints": [{"x": t * 1000, "y": v} for t, v in series],
        "metricPoints": [{"timestamp": _stamp(t), "value": max(0, int(v))} for t, v in series],
        "label": label,
        "aggregation": "sum",
        "uids": [uid],
    }


def split_names(text, what):
    names = []
    for part in (text or "").split(","):
        part = part.strip()
        if part and part not in names:
            names.append(part)
    if not names:
        raise bad_request("no %s names in %r" % (what, text))
    if len(names) > MAX_NAMES:
        raise bad_request("at most %d %s names in one request" % (MAX_NAMES, what))
    return names


def column_of(name):
    canonical = metric_names.canonical(name)
    if canonical is None:
        raise bad_request("unknown metric name %r; known: %s" % (
            name, ", ".join(list(metric_names.COLUMNS) + list(metric_names.ALIASES))))
    return metric_names.COLUMNS[canonical]


# Through the API server's service proxy the Authorization header is the API server's own (it
# removes it before proxying): the gateway then sends the token in this header instead.
TOKEN_HEADER = "X-Dashboard-Sidecar-Token"


def token_matches(headers, token):
    """Whether a request carries the shared token (Authorization: Bearer, or TOKEN_HEADER)."""
    given = headers.get(TOKEN_HEADER) or ""
    authorization = headers.get("Authorization") or ""
    if not given and authorization[:7].lower() == "bearer ":
        given = authorization[7:].strip()
    return bool(given) and hmac.compare_digest(given.encode("utf-8", "replace"),
                                               token.encode("utf-8"))


class Base(tornado.web.RequestHandler):
    open_without_token = False

    def initialize(self, store, scraper=None, token=None):
        self.store = store
        self.scraper = scraper
        self.token = token
        self.authorized = token is None

    def prepare(self):
        if self.token is not None:
            self.authorized = token_matches(self.request.headers, self.token)
            presented = self.request.headers.get(TOKEN_HEADER) is not None or \
                self.request.headers.get("Authorization") is not None
            if not self.authorized and (presented or not self.open_without_token):
                self.set_header("WWW-Authenticate", 'Bearer realm="metrics-sidecar"')
                self.fail(HttpError(401, "Unauthorized", "the sidecar's token is required "
                                    "(--sidecar-token-file)"))

    def set_default_headers(self):
        self.set_header("Content-Type", "application/json")

    def send(self, body, code=200):
        self.set_status(code)
        self.finish(json.dumps(body, separators=(",", ":")))

    def fail(self, error):
        self.send({"status": "Failure", "message": error.message, "reason": error.reason,
                   "code": error.code}, error.code)

    def write_error(self, status_code, **kwargs):
        self.send({"status": "Failure", "message": self._reason, "reason": "InternalError",
                   "code": status_code}, status_code)

    async def _answer(self, work):
        try:
            self.send({"items": await work})
        except HttpError as error:
            self.fail(error)

    async def pods(self, namespace, pods, name, container=None):
        column = column_of(name)
        found = await self.store.pod_series(namespace, pods, column, container)
        label = {"namespace": [namespace]}
        if container is not None:
            label["container"] = [container]
        return [metric(name, series, dict(label, pod=[pod]), pod)
                for pod, series in found.items()]

    async def nodes(self, nodes, name):
        found = await self.store.node_series(nodes, column_of(name))
        return [metric(name, series, {"node": [node]}, node) for node, series in found.items()]


class PodsOfNamespace(Base):
    """Forms 1 and 2: several pods of one namespace, one metric."""

    async def get(self, namespace, pods, name):
        try:
            work = self.pods(namespace, split_names(pods, "pod"), name)
        except HttpError as error:
            return self.fail(error)
        await self._answer(work)


class NodesByName(Base):
    async def get(self, nodes, name):
        try:
            work = self.nodes(split_names(nodes, "node"), name)
        except HttpError as error:
            return self.fail(error)
        await self._answer(work)


class Objects(Base):
    """Form 3: every metric named by ``metricNames`` of nodes, pods or one container."""

    def wanted_names(self):
        raw = self.get_query_argument("metricNames", None)
        return split_names(raw, "metric") if raw else list(metric_names.DEFAULT)


class NodeObjects(Objects):
    async def get(self, node=None):
        try:
            wanted = self.wanted_names()
            for name in wanted:
                column_of(name)
        except HttpError as error:
            return self.fail(error)
        await self._answer(self._all(wanted, None if node is None else [node]))

    async def _all(self, wanted, nodes):
        return [m for name in wanted for m in await self.nodes(nodes, name)]


class PodObjects(Objects):
    async def get(self, namespace, pod=None, container=None):
        try:
            wanted = self.wanted_names()
            for name in wanted:
                column_of(name)
        except HttpError as error:
            return self.fail(error)
        await self._answer(self._all(wanted, namespace, None if pod is None else [pod],
                                     container))

    async def _all(self, wanted, namespace, pods, container):
        return [m for name in wanted
                for m in await self.pods(namespace, pods, name, container)]


class Download(Base):
    """POST /api/v1/download: the batch download of several resources' series."""

    async def post(self):
        try:
            selectors, wanted = self._parse()
            items = []
            for name in wanted:
                column = column_of(name)
                items.extend(await self._series(selectors, name, column))
        except HttpError as error:
            return self.fail(error)
        self.send({"items": items})

    def _parse(self):
        try:
            body = json.loads(self.request.body or b"null")
        except (ValueError, RecursionError):   # RecursionError: nested too deeply
            raise bad_request("the body is not JSON") from None
        if isinstance(body, list):
            body = {"selectors": body}
        if not isinstance(body, dict) or not isinstance(body.get("selectors"), list):
            raise bad_request('the body must be {"selectors": [{namespace, resourceType, '
                              'resourceName, uid}], "metricNames": [...]}')
        selectors = body["selectors"]
        if not selectors or len(selectors) > MAX_SELECTORS:
            raise bad_request("between 1 and %d selectors, got %d"
                              % (MAX_SELECTORS, len(selectors)))
        for s in selectors:
            if not isinstance(s, dict) or s.get("resourceType") not in RESOURCE_TYPES:
                raise bad_request("each selector needs a resourceType of %s: %r"
                                  % (", ".join(RESOURCE_TYPES), s))
            if not isinstance(s.get("resourceName"), str) or not s["resourceName"]:
                raise bad_request("each selector needs a resourceName: %r" % (s,))
            if s["resourceType"] != "node" and not s.get("namespace"):
                raise bad_request("a %s selector needs a namespace: %r"
                                  % (s["resourceType"], s))
        wanted = body.get("metricNames") or list(metric_names.DEFAULT)
        if not isinstance(wanted, list) or not all(isinstance(n, str) for n in wanted):
            raise bad_request("metricNames must be a list of strings")
        return selectors, wanted

    async def _series(self, selectors, name, column):
        groups = {}
        for s in selectors:  # one query per (type, namespace), not per object
            groups.setdefault((s["resourceType"], s.get("namespace") or ""), []).append(s)
        out = []
        for (kind, namespace), chosen in groups.items():
            wanted = [s["resourceName"] for s in chosen]
            if kind == "node":
                found = await self.store.node_series(wanted, column)
            elif kind == "pod":
                found = await self.store.pod_series(namespace, wanted, column)
                uids = await self.store.pod_uids(namespace, wanted)
                found = {n: v for n, v in found.items()
                         if all(not s.get("uid") or s["uid"] in uids.get(n, ())
                                for s in chosen if s["resourceName"] == n)}
            else:
                found = await self.store.claim_series(namespace, wanted, column)
            for s in chosen:
                series = found.get(s["resourceName"])
                if series is None:
                    continue
                label = {kind: [s["resourceName"]]}
                if kind != "node":
                    label["namespace"] = [namespace]
                item = metric(name, series, label, s["resourceName"])
                item["selector"] = {"namespace": s.get("namespace") or "",
                                    "resourceType": kind, "resourceName": s["resourceName"],
                                    "uid": s.get("uid") or ""}
                out.append(item)
        return out


class Health(Base):
    # Probes (kubelet) carry no token: open to a request without credentials, but the scrape
    # details only to the token holder; a wrong token gets 401 (a misconfigured gateway then
    # sees the sidecar as unhealthy instead of failing later on every metrics call).
    open_without_token = True

    def get(self):
        body = {"status": "ok"}
        if self.scraper is not None and self.authorized:
            body.update(scrapes=self.scraper.scrapes, failures=self.scraper.failures,
                        lastError=self.scraper.last_error,
                        lastScrapeSeconds=self.scraper.last_seconds, **self.scraper.status())
        self.send(body)


class NotFound(Base):
    def prepare(self):
        super().prepare()
        if self._finished:
            return
        self.fail(HttpError(404, "NotFound", "no route %s %s; see the sidecar's routes: "
                            "/api/v1/dashboard/..., /api/v1/node, /api/v1/pod/..., "
                            "POST /api/v1/download, /healthz"
                            % (self.request.method, self.request.path)))


def url_specs(store, scraper=None, token=None):
    seg = r"([^/]+)"
    kw = {"store": store, "scraper": scraper, "token": token}
    dash = "/api/v1/dashboard/"
    return [
        (r"/healthz", Health, kw),
        (dash + "namespaces/" + seg + "/pod-list/" + seg + "/metrics/(.+)", PodsOfNamespace, kw),
        (dash + "nodes/" + seg + "/metrics/(.+)", NodesByName, kw),
        (dash + "node/" + seg + "/metrics/(.+)", NodesByName, kw),
        (dash + seg + "/pod/" + seg + "/metrics/(.+)", PodsOfNamespace, kw),
        (r"/api/v1/node", NodeObjects, kw),
        (r"/api/v1/node/" + seg, NodeObjects, kw),
        (r"/api/v1/pod/" + seg, PodObjects, kw),
        (r"/api/v1/pod/" + seg + "/" + seg, PodObjects, kw),
        (r"/api/v1/pod/" + seg + "/" + seg + "/" + seg, PodObjects, kw),
        (r"/api/v1/download", Download, kw),
    ]


def make_app(store, scraper=None, token=None):
    """The sidecar's application; with `token`, requests without it are refused (401) but
    for /healthz."""
    return tornado.web.Application(url_specs(store, scraper, token),
                                   default_handler_class=NotFound,
                                   default_handler_args={"store": store, "scraper": scraper,
                                                         "token": token})


def read_token(path):
    """The token in file `path` (surrounding white space dropped); raises OSError or
    ValueError (empty)."""
    with open(path, encoding="utf-8") as f:
        token = f.read().strip()
    if not token:
        raise ValueError("%s is empty" % path)
    return token
