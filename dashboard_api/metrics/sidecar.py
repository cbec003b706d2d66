"""The metrics sidecar client, health-checked every --metric-client-check-period.

With --sidecar-host it calls the sidecar directly; without, it goes through the API server's
service proxy to ``--metrics-scraper-service-name`` in ``--namespace`` with the service's own
identity (as upstream does). A check is ``GET /healthz``; any 2xx passes. It runs at start-up and
then periodically; metrics are to be used only while the last check passed. Callers read the
stored result: a check per request would let anyone make the service identity call the API
server as often as they like.

With --sidecar-token-file every call carries the shared token: as ``Authorization: Bearer``
when calling the sidecar directly, and in ``X-Dashboard-Sidecar-Token`` through the service
proxy (the API server takes the Authorization header for itself and does not pass it on).
"""

import asyncio
import datetime
import logging

import tornado.httpclient

from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api.sidecar")

TIMEOUT = 5.0
TOKEN_HEADER = "X-Dashboard-Sidecar-Token"


def read_token(path):
    """The token in file `path`, surrounding white space dropped; raises OSError (unreadable
    or empty)."""
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise OSError("cannot read --sidecar-token-file %s: %s"
                      % (path, getattr(exc, "strerror", None) or exc)) from None
    if not token:
        raise OSError("--sidecar-token-file %s is empty" % path)
    return token


class SidecarClient:
    def __init__(self, cluster, base_url=None, namespace=None, service=None, period=30.0,
                 token=None):
        self.cluster = cluster
        self._token = token
        self.base_url = base_url.rstrip("/") if base_url else None
        self.namespace = namespace
        self.service = service
        self.period = period
        self.healthy = False
        self.last_checked = None
        self.last_error = "not checked yet"
        self._task = None
        self._checked = asyncio.Event()

    @property
    def where(self):
        return self.base_url or "service %s/%s" % (self.namespace, self.service)

    async def get(self, path):
        """(status, body bytes) of a GET; ApiError(503) when the sidecar cannot be reached."""
        if self.base_url is None:
            proxy = "/api/v1/namespaces/%s/services/%s/proxy%s" % (self.namespace, self.service,
                                                                     path)
            handle = self.cluster.service_handle()
            if self._token is not None:
                handle = _WithHeader(handle, TOKEN_HEADER, self._token)
            response = await handle.call("GET", proxy, timeout=TIMEOUT)
            return response.status, response.data
        client = tornado.httpclient.AsyncHTTPClient()
        headers = {"Authorization": "Bearer " + self._token} if self._token is not None else {}
        try:
            response = await client.fetch(self.base_url + path, raise_error=False,
                                          headers=headers, connect_timeout=TIMEOUT,
                                          request_timeout=TIMEOUT)
        except (OSError, asyncio.TimeoutError, tornado.httpclient.HTTPClientError) as exc:
            raise ApiError(503, "the metrics sidecar is unreachable: %s"
                           % (exc.strerror if isinstance(exc, OSError) and exc.strerror
                              else type(exc).__name__)) from exc
        if response.code == 599:
            raise ApiError(503, "the metrics sidecar is unreachable: %s"
                           % type(response.error).__name__)
        return response.code, response.body

    async def check(self):
        """One health check; updates and returns ``healthy``."""
        try:
            status, _ = await self.get("/healthz")
            error = None if 200 <= status < 300 else "health check answered %d" % status
        except ApiError as exc:
            error = exc.message
        was = self.healthy if self.last_checked else None  # the first result is always logged
        self.healthy = error is None
        self.last_error = error
        self.last_checked = datetime.datetime.now(datetime.timezone.utc)
        self._checked.set()
        if was != self.healthy:
            if self.healthy:
                log.info("metrics sidecar at %s is healthy; metrics enabled", self.where)
            else:
                log.warning("metrics sidecar at %s failed its health check (%s); metrics "
                            "disabled until it passes", self.where, error)
        return self.healthy

    async def first_check(self):
        """Waits for the start-up check while it is under way (bounded: a check times out)."""
        if self.last_checked is None and self._task is not None:
            try:
                await asyncio.wait_for(self._checked.wait(), TIMEOUT + 1)
            except asyncio.TimeoutError:
                pass

    async def _loop(self):
        while True:
            await self.check()
            await asyncio.sleep(self.period)

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self._loop())

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None


class _WithHeader:
    """A cluster handle whose calls carry one more header line (the sidecar's token through
    the service proxy)."""

    def __init__(self, handle, name, value):
        self._handle = handle
        self._line = (name, value)

    def header_lines(self):
        return self._handle.header_lines() + [self._line]

    def headers(self):
        return type(self._handle).headers(self)

    def __getattr__(self, name):
        return getattr(self._handle, name)

    async def call(self, *args, **kwargs):
        return await type(self._handle).call(self, *args, **kwargs)
