"""The pods' facts kept by LIST then WATCH, so that a scrape reads only metrics.k8s.io.

At 150,000 pods, listing every pod on every scrape took most of the scrape (issue #19). A
``PodWatch`` (one per ``--namespaces`` entry) lists the pods that are not done once, keeps their
facts (podfacts.py) by UID, and follows a WATCH from the list's resourceVersion, as client-go's
reflector does: a watch that ends is resumed from the last version seen (bookmarks are asked
for, so that version stays recent); a 410 (or any ERROR event) lists again, the kept facts
answering meanwhile; other failures back off, jittered, doubling up to ``MAX_BACKOFF``, and
resume from the last version.

Why not dashboard_api/kubeapi/watch.py's Reflector: it runs on the gateway's cluster handles,
executor and Tornado client (service identity, TLS context, error mapping), which the sidecar,
a process of its own with a kubeconfig and a urllib3 pool, does not have; and its watch events
are decoded on the event loop. Here the WATCH is read in a daemon thread of its own, where each
event is decoded (msgspec, only the fields the facts need) and reduced to facts; the loop only
applies each chunk's batch of changes to the dict. The LIST pages are decoded in the Api's pool.

When the pods cannot be watched with the sidecar's identity (401, 403, 404: a ClusterRole
without ``watch``), the facts are dropped and ``kept()`` answers None: scrapes then LIST the pods
themselves, as before the watch; the watch is tried again after ``FORBIDDEN_RETRY``.

Memory: one tuple per pod (podfacts.py), in one dict; a re-list makes a second dict that reuses
every unchanged tuple, then replaces the first. Nothing here grows with the sidecar's clients.
"""

import asyncio
import logging
import random
import threading
import time
from typing import Optional

import msgspec
import urllib3

from metrics_sidecar import podfacts
from metrics_sidecar.api import ScrapeError, abort_stream, close_stream

log = logging.getLogger("metrics_sidecar.podwatch")

WATCH_SECONDS = 300      # the server ends each watch after about this long; resumed at once
MIN_BACKOFF, MAX_BACKOFF = 0.5, 30.0
FORBIDDEN_RETRY = 300.0  # a watch refused (RBAC) is tried again this often
READ_SIZE = 65536


class Gone(Exception):
    """The resourceVersion is too old (a 410, or an ERROR event): list again."""


def jittered(seconds):
    return seconds * random.uniform(0.5, 1.5)


class _Event(msgspec.Struct):
    type: str = ""
    object: Optional[podfacts.Pod] = None


_decode_event = msgspec.json.Decoder(_Event).decode
_NO_POD = podfacts.Pod()


def event(line):
    """(type, facts or None, resourceVersion or None) of one watch line; raises Gone on an
    ERROR event (its object, a Status, has no fields of a pod: nothing else is read)."""
    decoded = _decode_event(line)
    if decoded.type == "ERROR":
        raise Gone()
    obj = decoded.object or _NO_POD
    meta = obj.metadata
    version = meta.resourceVersion if meta is not None else None
    if decoded.type not in ("ADDED", "MODIFIED", "DELETED"):
        return decoded.type, None, version   # BOOKMARK: only the version
    return decoded.type, podfacts.facts_of(obj), version


class PodWatch:
    """Made in the running loop (Scraper is): on Python 3.9 the asyncio.Event below binds the
    loop current when it is made."""

    def __init__(self, api, namespace=""):
        self.api = api
        self.namespace = namespace
        self.facts = None          # {uid: PodFacts} once listed; None when not usable
        self.state = "syncing"     # "synced" (listed, watched), "syncing", "unavailable"
        self.settled = asyncio.Event()   # set when the first LIST ended, either way
        self.version = None
        self.lists = 0             # LISTs that completed
        self.relists = 0           # of which after a 410 / ERROR event
        self.events = 0            # ADDED, MODIFIED and DELETED applied
        self.restarts = 0          # watches that failed (not the ones the server ended)
        self.last_error = None
        self.synced_seconds = None  # the first LIST's duration
        self._stopped = False
        self._task = None
        self._response = None

    # -- what scrapes read ------------------------------------------------------------------

    def kept(self):
        """The kept facts as a list (a snapshot: the watch may change the dict meanwhile), or
        None when the pods are not watched (the caller lists them itself)."""
        return None if self.facts is None else list(self.facts.values())

    def status(self):
        return {"namespace": self.namespace, "state": self.state,
                "kept": len(self.facts) if self.facts is not None else None,
                "lists": self.lists, "relists": self.relists, "events": self.events,
                "restarts": self.restarts, "lastError": self.last_error}

    # -- the loop ---------------------------------------------------------------------------

    def start(self):
        self._task = asyncio.get_running_loop().create_task(self.run())
        return self._task

    def stop(self):
        self._stopped = True
        if self._response is not None:
            abort_stream(self._response)
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def run(self):
        backoff = MIN_BACKOFF
        version, gone = None, False
        while not self._stopped:
            try:
                if version is None:
                    version = await self.list(relist=gone)
                    gone = False
                    backoff = MIN_BACKOFF
                version = await self.watch(version)
                backoff = MIN_BACKOFF
            except asyncio.CancelledError:
                raise
            except Gone:
                version, gone = None, True
            except ScrapeError as exc:
                self.settled.set()
                self.restarts += 1
                self.last_error = str(exc)
                if exc.status == 410:
                    version, gone = None, True
                    continue
                if exc.status in (401, 403, 404):
                    self.facts, self.state = None, "unavailable"
                    version = None
                    log.warning("cannot list and watch pods%s with the sidecar's identity (%s): "
                                "scrapes list them; trying again in about %gs",
                                self._where(), exc, FORBIDDEN_RETRY)
                    await asyncio.sleep(jittered(FORBIDDEN_RETRY))
                    continue
                backoff = await self._back_off(backoff, exc)
            except Exception as exc:  # noqa: BLE001 (a bad reply: keep the facts alive)
                self.settled.set()
                self.restarts += 1
                self.last_error = "%s: %s" % (type(exc).__name__, exc)
                backoff = await self._back_off(backoff, exc)

    async def _back_off(self, backoff, exc):
        wait = jittered(backoff)
        log.info("pod watch%s failed (%s); retrying in %.1fs", self._where(), exc, wait)
        await asyncio.sleep(wait)
        return min(MAX_BACKOFF, backoff * 2)

    def _where(self):
        return " of namespace %s" % self.namespace if self.namespace else ""

    async def list(self, relist=False):
        """A full LIST into a new dict, which then replaces the kept one (that answered
        meanwhile); returns its resourceVersion."""
        if self.facts is None:
            self.state = "syncing"
        started = time.monotonic()
        facts, version = await podfacts.list_facts(self.api, self.namespace, reuse=self.facts)
        kept = {}
        for f in facts:
            kept[podfacts.key(f)] = f
        del facts
        self.facts, self.state, self.version = kept, "synced", version
        self.lists += 1
        self.relists += bool(relist)
        seconds = time.monotonic() - started
        if self.synced_seconds is None:
            self.synced_seconds = seconds
        self.settled.set()
        log.info("pods%s: %d kept after a LIST of %.3fs%s", self._where(), len(kept), seconds,
                 " (a re-list)" if relist else "")
        return version

    async def watch(self, version):
        """One WATCH from ``version``, read in a thread of its own; returns the last version
        seen when the server ends it."""
        loop = asyncio.get_running_loop()
        ended = loop.create_future()

        def settle(result, error):
            if not ended.done():
                if error is not None:
                    ended.set_exception(error)
                else:
                    ended.set_result(result)

        def read():
            try:
                result, error = self._read(version, loop), None
            except BaseException as exc:  # noqa: BLE001 (handed to the loop)
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(settle, result, error)
            except RuntimeError:  # the loop is closed: the process is stopping
                pass

        threading.Thread(target=read, name="pod-watch", daemon=True).start()
        return await ended

    def _read(self, version, loop):
        """The watch thread: reads the stream, decodes each event and hands each chunk's
        changes to the loop (in order: call_soon_threadsafe keeps it)."""
        params = {"watch": "1", "resourceVersion": version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(WATCH_SECONDS), "fieldSelector": podfacts.NOT_DONE}
        # Bookmarks come about every minute: silence past the idle limit is a dead connection
        # (a read timeout: the watch is resumed from ``version``).
        response = self.api.open_stream(podfacts.pods_path(self.namespace), params,
                                        self.api.watch_idle)
        self._response = response
        try:
            if self._stopped:
                return version
            rest = b""
            for chunk in response.stream(READ_SIZE):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                changes = []
                try:
                    for line in lines:
                        if line.strip():
                            kind, facts, seen = event(line)
                            version = seen or version
                            if facts is not None:
                                changes.append((kind, facts))
                finally:
                    if changes:
                        loop.call_soon_threadsafe(self._apply, changes, version)
            return version
        except (Gone, ScrapeError):
            raise
        except msgspec.DecodeError as exc:
            raise ScrapeError("the pod watch sent an event that is not one: %s" % exc) from None
        except urllib3.exceptions.ReadTimeoutError:
            raise ScrapeError("the pod watch heard nothing for %gs: resuming it"
                              % self.api.watch_idle) from None
        except Exception as exc:  # noqa: BLE001 (urllib3's read errors, or an abort by stop)
            raise ScrapeError("the pod watch broke: %s" % exc) from None
        finally:
            self._response = None
            close_stream(response)

    def _apply(self, changes, version):
        """On the loop: one chunk's changes. An unchanged pod (most MODIFIED events are status
        updates) keeps its tuple."""
        facts = self.facts
        if facts is None:
            return
        for kind, new in changes:
            k = podfacts.key(new)
            if kind == "DELETED":
                facts.pop(k, None)
            else:
                old = facts.get(k)
                if old != new:
                    facts[k] = new
        self.events += len(changes)
        self.version = version
