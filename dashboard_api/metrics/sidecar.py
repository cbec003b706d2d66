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

The sidecar's answers change only when it stores a scrape (once per its resolution); its
``/healthz`` says when the newest was taken (``lastScrapeAt``) and in how many seconds the next
starts (``nextScrapeInSeconds``). ``epoch()`` is the newest scrape's time until the next may
start, counted from before the question was sent (so never past it); then it is asked again,
one request at a time and at most every EPOCH_RETRY seconds while a scrape is under way or
late. That is what a list's metrics depend on, for the list's validator (lists/validators.py).
A sidecar that does not say gives no epoch: lists with metrics are then built on every
request, as before.
"""

import asyncio
import datetime
import logging
import time

import tornado.httpclient
import ujson

from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.singleflight import SingleFlight

log = logging.getLogger("dashboard_api.sidecar")

TIMEOUT = 5.0
TOKEN_HEADER = "X-Dashboard-Sidecar-Token"
# While the sidecar's next scrape is due (under way, or late), it is asked again at most this
# often; meanwhile there is no epoch.
EPOCH_RETRY = 0.5
# An epoch asked for while unknown waits this long for the sidecar's answer, at most.
EPOCH_WAIT = 1.0


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
                 token=None, clock=time.monotonic):
        self.cluster = cluster
        self.clock = clock
        self.known_epoch = None   # the newest scrape's time the sidecar last told of
        self._epoch_until = None  # (clock) until when no newer one can be stored
        self._asked_at = None     # (clock) when it was last asked
        self._polls = SingleFlight()
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

    def current_epoch(self):
        """The newest stored scrape's time while no newer one can have been stored, else
        None (without asking)."""
        if self._epoch_until is not None and self.clock() < self._epoch_until:
            return self.known_epoch
        return None

    async def epoch(self):
        """``current_epoch``, asked of the sidecar when it is not known (waiting EPOCH_WAIT at
        most; not again within EPOCH_RETRY); None when it cannot be had."""
        found = self.current_epoch()
        if found is not None:
            return found
        if self._asked_at is not None and self.clock() - self._asked_at < EPOCH_RETRY and \
                not self._polls:
            return None
        try:
            await asyncio.wait_for(asyncio.shield(self._polls.run("epoch", self._poll)),
                                   EPOCH_WAIT)
        except asyncio.TimeoutError:
            return None
        return self.current_epoch()

    async def _poll(self):
        sent = self.clock()
        try:
            status, body = await self.get("/healthz")
        except ApiError:
            status, body = 0, b""
        self._learn(status, body, sent)

    def _learn(self, status, body, sent):
        """What a /healthz answer to a question sent at ``sent`` (clock) says of the stored
        scrapes: the newest one's time, and for how long it stays the newest."""
        self._asked_at = sent
        self.known_epoch = self._epoch_until = None
        if not 200 <= status < 300:
            return
        try:
            health = ujson.loads(body or b"{}")
            at, wait = health.get("lastScrapeAt"), health.get("nextScrapeInSeconds")
        except (ValueError, AttributeError):
            return
        if isinstance(at, (int, float)) and isinstance(wait, (int, float)):
            self.known_epoch = at
            self._epoch_until = sent + wait

    async def check(self):
        """One health check; updates and returns ``healthy``."""
        sent = self.clock()
        try:
            status, body = await self.get("/healthz")
            error = None if 200 <= status < 300 else "health check answered %d" % status
            self._learn(status, body, sent)
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
