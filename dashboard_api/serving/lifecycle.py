"""Whether this replica is ready, and how it goes away without dropping requests.

A replica is ready once the API server has answered at start-up (it listens only after that)
and, with the watch cache on, every cached kind has synced and settled (the first time: see
ready(); cache/watchcache.py ``Cached.settled``: its watch caught up, the web UI's sorts built).
On SIGTERM (a rolling update, a node drain) it says so at once on ``/readyz`` (503) and goes on
serving for the drain period, so that the endpoints controller and the load balancers stop
sending it new requests; then it stops listening, closes its terminals with a toast (the
browser may open a new one on another replica), waits for the requests in flight and exits, all
within the grace period (under Kubernetes' default 30 s before SIGKILL).

SIGINT (Ctrl-C at a terminal) skips the drain period; a second signal stops at once.
"""

import asyncio
import logging
import time

log = logging.getLogger("dashboard_api")

RESTARTING = "The server is restarting: open the terminal again to continue."
POLL_SECONDS = 0.05


class Lifecycle:
    def __init__(self, cache=None, clock=time.monotonic):
        self.cache = cache
        self.clock = clock
        self.stopping = False
        self.cache_started = False  # set once the cache has registered every kind
        self._synced = cache is None
        self.in_flight = 0  # requests whose response has not been finished
        self.on_ready = None  # called once, when ready() first finds the cache settled

    def ready(self):
        """(ready, why not)."""
        if self.stopping:
            return False, "shutting down"
        if not self._synced:
            if not self.cache_started:  # kinds not registered yet would not count as syncing
                return False, "the watch cache is starting"
            # Once every kind has synced, ready for good: during a later re-list (a watch
            # that expired, an API server restart or away) the last synced store keeps
            # answering, and every replica sees it at once; readiness must not take them all
            # out together (issue 27: docs/faults.md).
            self._synced = self.cache.settled()
            if not self._synced:
                return False, "the watch cache is syncing"
            if self.on_ready is not None:
                self.on_ready()
        return True, "ok"

    # --- request accounting (server.Application) ------------------------------------------

    def request_started(self):
        self.in_flight += 1

    def request_finished(self):
        self.in_flight = max(0, self.in_flight - 1)


async def shut_down(lifecycle, servers, sessions, drain, grace, hurry):
    """Goes away as the module doc says. `sessions`: the terminal sessions of every cluster;
    `hurry` is an asyncio.Event set by a later signal; `drain` is skipped when it is 0
    (SIGINT)."""
    sessions = [s for s in sessions if s is not None]
    deadline = lifecycle.clock() + grace
    lifecycle.stopping = True
    if drain > 0:
        log.info("stopping: not ready any more, serving for %.1fs while endpoints update",
                 drain)
        await _wait_for(hurry, min(drain, grace))
    for server in servers:
        server.stop()
    running = sum(len(s.running) for s in sessions)
    if running:
        log.info("closing %d terminals", running)
        for terminals in sessions:
            terminals.close_all(RESTARTING)
    while not hurry.is_set() and lifecycle.clock() < deadline:
        if lifecycle.in_flight == 0 and not any(s.running for s in sessions):
            break
        await _wait_for(hurry, POLL_SECONDS)
    else:
        if lifecycle.in_flight:
            log.warning("stopping with %d requests unfinished", lifecycle.in_flight)
    for server in servers:
        # Idle keep-alive connections: closed now rather than cut when the process ends.
        try:
            await asyncio.wait_for(server.close_all_connections(),
                                   max(0.1, deadline - lifecycle.clock()))
        except asyncio.TimeoutError:
            pass


def quiet_cancelled_fetches():
    """At exit the watch cache's streams are cancelled mid-body; Tornado's HTTP client then logs
    "Exception after Future was cancelled" with a traceback when their connections close. That
    is the expected end of a watch, not an error: drop those records from then on."""
    logging.getLogger("tornado.application").addFilter(
        lambda record: "after Future was cancelled" not in str(record.msg))


async def _wait_for(event, seconds):
    try:
        await asyncio.wait_for(event.wait(), seconds)
    except asyncio.TimeoutError:
        pass
