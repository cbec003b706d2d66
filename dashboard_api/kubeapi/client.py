"""Raw, asynchronous calls to the API server with the caller's own credentials.

Objects come back as plain dicts decoded by ujson from the raw bytes: the typed models of the
``kubernetes`` package cost 20-35 times as much. The blocking urllib3 calls run in the bounded
executor; the event loop only awaits them.
"""

import asyncio
import gc
import urllib.parse

import ujson
import urllib3
from urllib3._collections import HTTPHeaderDict

from dashboard_api.kubeapi.config import USER_AGENT
from dashboard_api.kubeapi.deadlines import (Deadline, changes, not_connected, read_body, timed_out,
                                             unreachable)
from dashboard_api.kubeapi.discovery import Discovery
from dashboard_api.kubeapi.executor import Executor
from dashboard_api.kubeapi.identity import identity_key
from dashboard_api.kubeapi.ratelimit import UNLIMITED, Buckets
from dashboard_api.serving.errors import ApiError, from_apiserver

# A big LIST decodes into millions of small objects; the cyclic collector rescanning them is most
# of the decode time, and they hold no cycles. Raised thresholds keep it out of the way.
gc.set_threshold(100_000, 50, 100)

CHUNK = 65536
GRACE = 0.5     # the loop's backstop waits this much longer than the worker's own deadline
SELF_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
IMPERSONATION_PREFIXES = ("impersonate-user", "impersonate-group", "impersonate-extra-",
                          "impersonate-uid")


class Response:
    __slots__ = ("status", "headers", "data", "decoded")

    def __init__(self, status, headers, data, decoded=None):
        self.status = status
        self.headers = headers
        self.data = data
        self.decoded = decoded

    def json(self):
        if self.decoded is None and self.data:
            self.decoded = ujson.loads(self.data)
        return self.decoded


class Stream:
    """A streamed response body (logs); chunks are read in the executor."""

    def __init__(self, cluster, response, idle):
        self._cluster = cluster
        self._response = response
        self.status = response.status
        self.headers = response.headers
        self.idle = idle
        sock = getattr(response.connection, "sock", None)
        if sock is not None:
            sock.settimeout(idle)   # from now on the longest wait for the next chunk

    async def read(self, size=65536, fill=False):
        """Returns the next chunk, or b"" at the end.

        By default a chunk is whatever has arrived (a followed log must not wait for more);
        ``fill=True`` waits for ``size`` bytes, which costs far fewer executor round trips on a
        bulk download (the API server's chunks are ~12 KiB).
        """
        return await self._cluster.streams.run(self._read, size, fill)

    def _read(self, size, fill):
        try:
            return (self._response.read if fill else self._response.read1)(size)
        except (urllib3.exceptions.ReadTimeoutError, TimeoutError) as exc:
            raise ApiError(504, "the API server sent nothing for %gs" % self.idle,
                           "Timeout") from exc
        except urllib3.exceptions.HTTPError as exc:
            raise unreachable("GET", exc) from exc

    def close(self):
        # Closed before release, so a half-read connection never goes back to the pool.
        self._response.close()
        self._response.release_conn()


class Cluster:
    """The process-wide door to the API server: pools, executors, rate limits, discovery.

    Streamed bodies (logs) are read in an executor of their own: a stalled stream must not
    take the workers that every other request needs.
    """

    def __init__(self, config, executor=None, qps=0, burst=1, timeout=30.0,
                 connect_timeout=5.0, exec_ping_interval=30.0):
        self.config = config
        self.executor = executor or Executor(max_workers=16)
        self.streams = Executor(max_workers=self.executor.max_workers)
        self.buckets = Buckets(qps, burst)
        self.timeout = timeout                  # the response deadline of every call
        self.connect_timeout = connect_timeout
        self.exec_ping_interval = exec_ping_interval   # terminals (terminal/execstream.py)
        self.discovery = Discovery()
        self.writes = 0   # objects written through callers' handles (cache/applied.py)

    def handle(self, token, impersonation=None):
        return Handle(self, {"Authorization": "Bearer " + token}, impersonation or {},
                      limiter=self.buckets.for_caller(token))

    def impersonating(self, impersonation, key):
        """The service's own credentials naming a person the gateway has verified itself
        (``impersonation``: their Impersonate-User and Impersonate-Group lines): a cluster in
        ``impersonate`` mode (auth/persons.py). ``key`` (their ID token) tells callers apart
        for the rate limit, as a token does."""
        if self.config.service_pool is None:
            raise ApiError(500, "the service has no identity of its own in proxy mode")
        return Handle(self, None, impersonation, service=True,
                      limiter=self.buckets.for_caller(key))

    def service_handle(self):
        """The service's own identity; only for calls the specification allows."""
        if self.config.service_pool is None:
            raise ApiError(500, "the service has no identity of its own in proxy mode")
        return Handle(self, None, {}, service=True, limiter=self.buckets.for_caller(""))

    def url(self, path, params=None):
        url = self.config.host + path
        if params:
            url += "?" + urllib.parse.urlencode(
                [(k, v) for k, v in params.items() if v is not None], doseq=True)
        return url

    def deadline(self, seconds=None, write=False):
        """A call's Deadline: ``seconds`` (default the response deadline) from now."""
        return Deadline(seconds or self.timeout, self.connect_timeout, write)

    async def run_call(self, executor, deadline, method, fn, *args):
        """``fn(*args)`` in ``executor``, answered by the deadline at the latest (504).

        The worker bounds its own socket waits by the same deadline (``_send``), so it is
        free again at about the same time; the wait here is the backstop. A job still queued
        then gives up as soon as it starts; one that answers late has its stream closed."""
        job = asyncio.ensure_future(executor.run(fn, *args))
        try:
            return await asyncio.wait_for(asyncio.shield(job),
                                          max(0.0, deadline.remaining()) + GRACE)
        except asyncio.TimeoutError:
            job.add_done_callback(_close_late)
            raise timed_out(method, deadline.seconds, deadline.write) from None

    def _send(self, pool, method, url, headers, body, deadline, stream, decode=False):
        if deadline.passed():   # waited for a worker past it: nothing is sent
            raise timed_out(method, deadline.seconds)
        remaining = deadline.remaining()
        timeout = urllib3.Timeout(connect=min(deadline.connect, remaining), read=remaining)
        try:
            try:
                response = pool.request(method, url, headers=headers, body=body,
                                        preload_content=False, redirect=False,
                                        retries=False, timeout=timeout)
            except urllib3.exceptions.ClosedPoolError:   # cleared meanwhile: nothing sent
                response = pool.request(method, url, headers=headers, body=body,
                                        preload_content=False, redirect=False,
                                        retries=False, timeout=timeout)
        except urllib3.exceptions.NewConnectionError as exc:   # refused: nothing sent
            raise unreachable(method, exc) from exc
        except urllib3.exceptions.ConnectTimeoutError as exc:
            raise not_connected(deadline.connect) from exc
        except urllib3.exceptions.ReadTimeoutError as exc:
            _forget_idle(pool)
            raise timed_out(method, deadline.seconds, deadline.write) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise unreachable(method, exc, deadline.write) from exc
        if stream and response.status < 400:
            return response
        data = _read_all(response, method, deadline)
        result = Response(response.status, response.headers, data)
        if decode and response.status < 400:
            result.json()  # here in the worker, not on the event loop
            if callable(decode) and isinstance(result.decoded, dict):
                # What the caller keeps of a LIST page's items, made here too: the full
                # objects are dropped in the worker, not on the event loop.
                result.decoded["items"] = decode(result.decoded.get("items") or [])
        return result

    def shutdown(self):
        self.executor.shutdown()
        self.streams.shutdown()


class Handle:
    """One caller's view of the cluster: their token and impersonation headers on every call.
    ``after_write(method, path, response)``, when set, is awaited after each call (the
    request's own writes wait for the watch cache: cache/applied.py)."""

    after_write = None

    def __init__(self, cluster, auth, impersonation, service=False, limiter=None):
        self.cluster = cluster
        self._auth = auth
        self._impersonation = impersonation_lines(impersonation)
        self._service = service
        self.limiter = limiter or UNLIMITED

    @property
    def token(self):
        """The caller's bearer token (None for the service identity)."""
        value = (self._auth or {}).get("Authorization", "")
        return value[len("Bearer "):] if value.startswith("Bearer ") else None

    @property
    def impersonation(self):
        """The impersonation header lines, ((name, value), ...), in the caller's order."""
        return self._impersonation

    _identity = None

    @property
    def identity(self):
        """The identity of these credentials (kubeapi/identity.py), made once per handle: a
        request asks for it several times (its page, each access answer, its validator)."""
        if self._identity is None:
            self._identity = identity_key(self.token or "", self._impersonation)
        return self._identity

    @property
    def service(self):
        """Whether calls carry the service's own credentials (its identity, or a person it
        impersonates): they go through the service's pool and TLS context."""
        return self._service

    def pool(self):
        config = self.cluster.config
        return config.service_pool if self._service else config.user_pool

    def header_lines(self):
        """Every header of a call as (name, value) lines; a repeated impersonation header
        stays one line per value."""
        lines = [("User-Agent", USER_AGENT), ("Accept", "application/json")]
        if self._service:
            lines.extend(self.cluster.config.service_headers().items())
        elif self._auth:
            lines.extend(self._auth.items())
        lines.extend(self._impersonation)
        return lines

    def headers(self):
        """The headers for urllib3, which sends each value of an HTTPHeaderDict as a line."""
        headers = HTTPHeaderDict()
        for name, value in self.header_lines():
            headers.add(name, value)
        return headers

    async def call(self, method, path, params=None, body=None,
                   content_type="application/json", timeout=None, decode=False):
        """Any call; returns the Response whatever its status."""
        cluster = self.cluster
        headers = self.headers()
        if body is not None and not isinstance(body, (bytes, str)):
            body = ujson.dumps(body, ensure_ascii=False, escape_forward_slashes=False)
        if body is not None:
            headers["Content-Type"] = content_type
        pool = self.pool()
        await self.limiter.acquire()
        deadline = cluster.deadline(timeout, changes(method, path))
        response = await cluster.run_call(
            cluster.executor, deadline, method, cluster._send, pool, method,
            cluster.url(path, params), headers, body, deadline, False, decode)
        if self.after_write is not None:
            await self.after_write(method, path, response)
        return response

    async def request(self, method, path, params=None, body=None,
                      content_type="application/json", timeout=None):
        """A call whose non-2xx reply raises the mapped ApiError; returns the decoded body."""
        response = await self.call(method, path, params, body, content_type, timeout,
                                   decode=True)
        if response.status >= 400:
            raise from_apiserver(response.status, response.data)
        return response.json() if response.data else None

    async def get(self, path, params=None):
        return await self.request("GET", path, params)

    async def get_page(self, path, params, transform):
        """A GET of one LIST page whose ``items`` come back as ``transform(items)``, computed
        in the worker that decoded them."""
        response = await self.call("GET", path, params, decode=transform)
        if response.status >= 400:
            raise from_apiserver(response.status, response.data)
        return response.json() or {}

    async def can_i(self, **attributes):
        """Whether the caller may do ``verb`` on ``resource`` (and namespace, name, group,
        subresource), asked of the API server as a SelfSubjectAccessReview."""
        review = await self.request("POST", SELF_REVIEWS, body={
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes}})
        return bool(((review or {}).get("status") or {}).get("allowed"))

    async def rules(self, namespace):
        """What the caller may do in ``namespace``, as the API server's authorizers list it
        (a SelfSubjectRulesReview): its status, ``{"resourceRules": [...], "incomplete":
        bool}``; ``incomplete`` when an authorizer cannot list its rules (then only a
        SelfSubjectAccessReview says)."""
        review = await self.request("POST", RULES_REVIEWS, body={
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": namespace}})
        return (review or {}).get("status") or {}

    async def stream(self, path, params=None, timeout=None):
        """A GET whose body is read in chunks (logs). Errors raise the mapped ApiError.

        ``timeout`` (default the response deadline) bounds the wait for the headers, then
        each wait for the next chunk: an idle limit, not a total one, so that a long download
        goes on as long as bytes keep coming."""
        cluster = self.cluster
        await self.limiter.acquire()
        deadline = cluster.deadline(timeout)
        result = await cluster.run_call(
            cluster.streams, deadline, "GET", cluster._send, self.pool(), "GET",
            cluster.url(path, params), self.headers(), None, deadline, True)
        if isinstance(result, Response):
            raise from_apiserver(result.status, result.data)
        return Stream(cluster, result, deadline.seconds)


def _read_all(response, method, deadline):
    """The whole body by the deadline (deadlines.read_body), its failures as ApiErrors."""
    try:
        return read_body(response, deadline, CHUNK)
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError) as exc:
        raise timed_out(method, deadline.seconds, deadline.write) from exc
    except urllib3.exceptions.HTTPError as exc:
        raise unreachable(method, exc, deadline.write) from exc


def _close_late(job):
    """A streamed response that came after its caller gave up: its connection is closed."""
    if job.cancelled() or job.exception() is not None:
        return
    result = job.result()
    if isinstance(result, urllib3.BaseHTTPResponse):
        result.close()
        result.release_conn()


def _forget_idle(pool):
    """After a call got no answer on its connection, the other idle connections of the pool
    are closed too: opened at the same time through the same path, they are likely as
    silent (a NAT or a load balancer that forgot them), and each would cost the next calls a
    whole deadline. Calls in flight keep theirs; new calls open fresh connections."""
    pool.clear()


def impersonation_lines(impersonation):
    """((name, value), ...) from lines or a dict of one value per name."""
    if not impersonation:
        return ()
    items = impersonation.items() if hasattr(impersonation, "items") else impersonation
    return tuple((str(name), str(value)) for name, value in items)


def is_impersonation_header(name):
    lower = name.lower()
    return any(lower == p or (p.endswith("-") and lower.startswith(p))
               for p in IMPERSONATION_PREFIXES)
