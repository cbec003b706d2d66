"""A cluster's version and reachability for the list of clusters (GET /api/v1/clusters), kept
from a background probe so that the list never waits on a cluster that is down or hung.

The probe asks GET /version with the service's own identity (never a caller's token: a token
is sent to the cluster of its request's path only), with a short deadline, at most once per
``period``, started when the list is asked for. The list answers with what is known then.
"""

import asyncio
import logging
import time

from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api")

PERIOD = 30.0    # seconds between two probes of one cluster, at the most often
DEADLINE = 3.0   # seconds a probe waits for the API server's answer


class Probe:
    """``version`` (the API server's gitVersion, None until known) and ``reachable`` (True:
    it answered last time; False: it did not; None: not asked yet, or no identity to ask
    with, as in --proxy mode)."""

    def __init__(self, api, clock=time.monotonic, period=PERIOD, deadline=DEADLINE):
        self.api = api
        self.clock = clock
        self.period = period
        self.deadline = deadline
        self.version = None
        self.reachable = None
        self._asked = None   # the clock when the last probe started
        self._task = None

    def refresh(self):
        """Starts a probe unless one runs or one started less than ``period`` ago; returns at
        once (the answer lands on this object)."""
        if self._task is not None and not self._task.done():
            return
        now = self.clock()
        if self._asked is not None and now - self._asked < self.period:
            return
        self._asked = now
        self._task = asyncio.ensure_future(self._run())

    def answered(self, body):
        """What a caller's own GET /version of this cluster said (it answered: reachable)."""
        self.reachable = True
        version = (body or {}).get("gitVersion") if isinstance(body, dict) else None
        if version:
            self.version = str(version)

    async def _run(self):
        try:
            handle = self.api.service_handle()
        except ApiError:
            return  # --proxy: the service has no identity of its own to ask with
        try:
            response = await handle.call("GET", "/version", timeout=self.deadline, decode=True)
            # Any HTTP answer says it is reachable; the version only from a 200.
            body = response.json() if response.status == 200 and response.data else None
        except ApiError as exc:   # refused, not connected, or past the deadline
            log.info("cluster %s did not answer its probe: %s", self.api.config.host,
                     exc.message)
            self.reachable = False
            return
        except Exception:  # noqa: BLE001 - anything else: not known to answer
            log.warning("probe of %s failed", self.api.config.host, exc_info=True)
            self.reachable = False
            return
        self.answered(body)

    def stop(self):
        if self._task is not None and not self._task.done():
            self._task.cancel()
