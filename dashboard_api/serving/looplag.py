"""The event-loop lag monitor: how late the loop runs what is due, and who held it.

Two measures:

* a timer due every ``INTERVAL`` seconds notes how late it actually ran: the series
  ``dashboard_event_loop_lag_seconds`` (a histogram) on /metrics. A loop held for 18 s shows as
  one sample of 18 s;
* every step the loop runs (asyncio's ``Handle._run``: a callback, one resumption of a
  coroutine) is timed; a step over ``SLOW_STEP`` seconds logs a warning naming the request it
  belonged to (method and path, no query; a SockJS session id only as its fingerprint), taken
  from a context variable that the application sets when a request's headers are in and that
  asyncio carries into every task the request starts. Steps of no request (watch events, the
  cache) name their callback instead.

asyncio's own debug mode (``slow_callback_duration``) would time steps too, but it records a
traceback on every call_soon, too slow to leave on in production.
"""

import asyncio
import contextvars
import logging
import time

import prometheus_client

from dashboard_api.serving import requestlog

log = logging.getLogger("dashboard_api.looplag")

INTERVAL = 0.1
SLOW_STEP = 0.1
BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SOCKJS_PREFIX = "/api/sockjs/"

# The request whose work the current step does: "GET /api/v1/pod/default".
CURRENT = contextvars.ContextVar("dashboard_request", default=None)


def describe(method, path):
    """Method and path as the warning shows them: never a query, a SockJS session id only as
    its fingerprint (the id lets whoever knows it use that terminal's fallback transports)."""
    if path.startswith(SOCKJS_PREFIX):
        path = requestlog.terminal_path(path)
    return "%s %s" % (method, path[:300])


def request_started(request):
    """The application calls this once a request's headers are in."""
    CURRENT.set(describe(request.method or "", request.path or ""))


_original_run = asyncio.events.Handle._run
_installed = False


def _callback_name(handle):
    callback = getattr(handle, "_callback", None)
    return getattr(callback, "__qualname__", type(callback).__name__)


def _timed_run(self):
    started = time.perf_counter()
    _original_run(self)
    took = time.perf_counter() - started
    if took > SLOW_STEP:
        context = getattr(self, "_context", None)
        request = context.get(CURRENT) if context is not None else None
        if request:
            log.warning("the event loop was held %.0f ms by one step of the request %s",
                        took * 1000, request)
        else:
            log.warning("the event loop was held %.0f ms by one step of %s (no request)",
                        took * 1000, _callback_name(self))


def install_step_timer():
    """Times every step of every asyncio loop of the process (once; idempotent)."""
    global _installed
    if not _installed:
        asyncio.events.Handle._run = _timed_run
        _installed = True


def uninstall_step_timer():
    """Back to asyncio's own Handle._run (for tests)."""
    global _installed
    asyncio.events.Handle._run = _original_run
    _installed = False


class LoopLag:
    def __init__(self, registry, interval=INTERVAL):
        self.interval = interval
        self.histogram = prometheus_client.Histogram(
            "dashboard_event_loop_lag_seconds",
            "How late the event loop ran a timer due every %g s (seconds)." % interval,
            buckets=BUCKETS, registry=registry)
        self._loop = None
        self._due = 0.0
        self._timer = None

    def start(self):
        install_step_timer()
        self._loop = asyncio.get_running_loop()
        self._due = self._loop.time() + self.interval
        self._timer = self._loop.call_at(self._due, self._tick)

    def _tick(self):
        now = self._loop.time()
        self.histogram.observe(max(0.0, now - self._due))
        self._due = now + self.interval
        self._timer = self._loop.call_at(self._due, self._tick)

    def stop(self):
        if self._timer is not None:
            self._timer.cancel()
