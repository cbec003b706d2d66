"""The audit trail: every entry to the log at once, and to the database behind, never in the
way of the change it records.

``record(entries)`` writes each entry to the ``dashboard_api.audit`` logger as one JSON line
(for log shippers) and queues it for the store; it never waits. One thread of its own talks to
the store (SQLite is used from the thread that opened it; a PostgreSQL call may block for its
whole timeout), writing what is queued in batches of at most ``BATCH``. When the store cannot
take a batch (the file is unwritable, PostgreSQL is down or unreachable), the entries stay
queued and are written once it takes them again: retried after ``RETRY_MIN`` seconds, then
backing off to ``RETRY_MAX``; the store is reopened on each try. Meanwhile ``/metrics`` says
how many entries wait (``dashboard_audit_entries_pending``) and how many writes failed
(``dashboard_audit_store_failures_total``), and the log says so once per outage. At most
``max_pending`` entries wait in memory: past that an entry is not kept for the store (it is in
the log) and ``dashboard_audit_entries_dropped_total`` counts it, with an error in the log.
Nothing is lost silently. At shutdown the queue is flushed for at most ``FLUSH_WAIT``
seconds; what is left is named in the log.

The store is pruned when the trail starts and every ``PRUNE_EVERY`` seconds: entries older
than the retention's age go, then the oldest beyond its number of entries.
"""

import asyncio
import collections
import concurrent.futures
import logging
import time

from prometheus_client.core import Metric

from dashboard_api.audit.entry import json_line
from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api.audit_trail")
entries_log = logging.getLogger("dashboard_api.audit")

BATCH = 500
MAX_PENDING = 20000
RETRY_MIN = 0.5
RETRY_MAX = 5.0
PRUNE_EVERY = 600.0
FLUSH_WAIT = 3.0
# Reads of the store waiting for its thread at once, process-wide: past that a reader is told
# to come back (429), so that readers can neither queue without bound nor starve the writer.
MAX_READS = 8


class Retention:
    """``age`` seconds and ``entries`` at most."""

    def __init__(self, age, entries):
        self.age, self.entries = age, entries


class AuditTrail:
    def __init__(self, store, retention, clock=time.time, max_pending=MAX_PENDING,
                 retry_min=RETRY_MIN, retry_max=RETRY_MAX, prune_every=PRUNE_EVERY):
        self.store = store
        self.retention = retention
        self.clock = clock
        self.max_pending = max_pending
        self.retry_min, self.retry_max = retry_min, retry_max
        self.prune_every = prune_every
        self.pending = collections.deque()
        self.stored = 0
        self.failures = 0
        self.dropped = 0
        self.pruned = 0
        self.up = False
        self.reads = 0   # reads waiting for or running in the thread
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="audit")
        self._wake = None
        self._task = None
        self._outage = False
        self._last_prune = None

    # --- recording (on the event loop, never waiting) -------------------------------------

    def record(self, entries):
        for entry in entries:
            entries_log.info("%s", json_line(entry))
            if len(self.pending) >= self.max_pending:
                self.dropped += 1
                log.error("audit entry %s not kept for the database: %d entries already wait "
                          "for it (it is in the log above)", entry["id"], len(self.pending))
                continue
            self.pending.append(entry)
        if self._wake is not None:
            self._wake.set()

    # --- the writer -----------------------------------------------------------------------

    def start(self):
        """Starts the writer (on the event loop)."""
        self._wake = asyncio.Event()
        self._task = asyncio.ensure_future(self._run())

    async def _in_thread(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def _run(self):
        delay = self.retry_min
        while True:
            try:
                await self._in_thread(self._write_some)
                delay = self.retry_min
            except Exception as exc:  # any driver's error: the entries stay queued
                self._failed(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.retry_max)
                continue
            if not self.pending:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), self.prune_every)
                except asyncio.TimeoutError:
                    pass

    def _write_some(self):
        """In the thread: (re)opens the store, prunes when due, writes one batch."""
        if self.store.db is None:
            self.store.open()
        if not self.up:
            self.up = True
            if self._outage:
                log.warning("the audit database %s takes entries again; %d waiting are being "
                            "written", self.store.describe(), len(self.pending))
            self._outage = False
        now = self.clock()
        if self._last_prune is None or now - self._last_prune >= self.prune_every:
            self.pruned += self.store.prune(now - self.retention.age, self.retention.entries)
            self._last_prune = now
        batch = [self.pending[i] for i in range(min(BATCH, len(self.pending)))]
        if batch:
            self.store.insert(batch)
            for _ in batch:
                self.pending.popleft()
            self.stored += len(batch)

    def _failed(self, exc):
        self.failures += 1
        self.up = False
        if not self._outage:
            self._outage = True
            log.error("the audit database %s does not take entries (%s: %s): they are kept in "
                      "memory (at most %d) and written once it does; each is in the log",
                      self.store.describe(), type(exc).__name__, str(exc)[:300],
                      self.max_pending)
        try:
            self.store.close()
        except Exception:  # a connection already broken may fail to close too
            log.debug("closing the audit database failed", exc_info=True)

    # --- reading ----------------------------------------------------------------------------

    async def read(self, fn, *args):
        """``fn(store, *args)`` in the trail's thread; a 503 when the store cannot answer, a
        429 when ``MAX_READS`` reads already wait."""
        if self.reads >= MAX_READS:
            error = ApiError(429, "too many reads of the audit trail at once; try again in a "
                                  "moment", "TooManyRequests")
            error.headers["Retry-After"] = "1"
            raise error

        def call():
            if self.store.db is None:
                self.store.open()
            return fn(self.store, *args)
        self.reads += 1
        try:
            return await self._in_thread(call)
        except Exception as exc:
            log.warning("reading the audit database failed: %s: %s", type(exc).__name__,
                        str(exc)[:300])
            raise ApiError(503, "the audit database cannot be read now; try again later",
                           "ServiceUnavailable") from None
        finally:
            self.reads -= 1

    # --- the end ------------------------------------------------------------------------------

    async def stop(self, wait=FLUSH_WAIT):
        """Writes what waits (for at most ``wait`` seconds), then closes the store."""
        if self._task is not None:
            self._task.cancel()
        deadline = time.monotonic() + wait
        while self.pending and time.monotonic() < deadline:
            try:
                await asyncio.wait_for(self._in_thread(self._write_some),
                                       max(0.1, deadline - time.monotonic()))
            except Exception:  # the store still refuses: say what is left below
                break
        if self.pending:
            log.error("%d audit entries were not written to %s before the process ended: "
                      "they are in the log as JSON lines (logger dashboard_api.audit)",
                      len(self.pending), self.store.describe())
        try:
            await asyncio.wait_for(self._in_thread(self.store.close), 2.0)
        except Exception:  # the process is ending; the driver may hang on a dead server
            log.debug("closing the audit database failed", exc_info=True)
        self._thread.shutdown(wait=False)


class AuditCollector:
    """The trail's series on /metrics."""

    def __init__(self, trail):
        self.trail = trail

    def describe(self):
        return []

    def collect(self):
        trail = self.trail
        for name, kind, text, value in (
                ("dashboard_audit_entries_stored", "counter",
                 "audit entries written to the audit database", trail.stored),
                ("dashboard_audit_entries_pending", "gauge",
                 "audit entries waiting for the audit database (each is in the log already)",
                 len(trail.pending)),
                ("dashboard_audit_entries_dropped", "counter",
                 "audit entries not kept for the database because too many waited (each is in "
                 "the log)", trail.dropped),
                ("dashboard_audit_store_failures", "counter",
                 "writes the audit database did not take (their entries wait and are retried)",
                 trail.failures),
                ("dashboard_audit_store_up", "gauge",
                 "1 while the audit database takes entries", 1 if trail.up else 0),
                ("dashboard_audit_entries_pruned", "counter",
                 "audit entries deleted by --audit-retention", trail.pruned)):
            metric = Metric(name, text, kind)
            metric.add_sample(name + ("_total" if kind == "counter" else ""), {}, value)
            yield metric
