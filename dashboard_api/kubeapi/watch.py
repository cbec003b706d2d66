"""LIST then WATCH one resource with the service's own identity, on the event loop.

The reflector's loop, as client-go's informers have it: a chunked LIST gives the objects and a
resourceVersion; a WATCH from that version (with bookmarks) streams the changes; a watch that
ends is resumed from the last version seen; a version that is too old (410 Gone) starts again with
a LIST; other failures back off, doubling up to ``MAX_BACKOFF``. The watch stream is read by
Tornado's HTTP client with a streaming callback: no thread per watch. LIST pages are decoded and
turned into rows in the executor, through the process's bound on such jobs (kubeapi/background.py:
a re-list of every kind at once must not take the interpreter's lock from the event loop).

The consumer gets ``relist(rows, version, run)`` (a coroutine, awaited; ``run`` runs a function
in the executor), ``apply(type, row, version)`` and ``state(name)`` calls; ``to_row(obj)`` turns
an object as ``decode`` gives it (the kind's: Kind.decode) into what it stores (it runs in the
executor, for LIST pages and for watch events alike); an optional ``paged()`` is called in the
worker once a LIST page's rows are made.

Watch events too are decoded and made rows in the executor, a batch of the lines that arrived at
a time, and applied on the loop in slices of at most APPLY_SLICE seconds (issue #41): right
after a sync, a watch delivers every change made while the LIST ran (thousands at 200 changes a
second), and done on the loop, their decoding held it for a second or more just as /readyz said
ready. Lines waiting for the executor are bounded: past PENDING_BYTES, the stream is read no
further until they are applied (kubeapi/watchclient.py flow control), so a burst waits in the
API server's socket, not in this process.

A re-list (after a 410, a failed watch) is reported as ``state("syncing")`` and ends with one
``relist``: the consumer keeps answering from what it has meanwhile (cache/store.py). With
``reuse(obj)`` (the store's ``reusable``), an object whose uid and resourceVersion did not change
keeps its live row, so a re-list holds the old store plus only what changed, never a second full
copy. LIST pages and watch events are decoded with msgspec (faster than ujson, and it shares dict
keys); a page's items one at a time (issue #19). Watches
ask for bookmarks (``allowWatchBookmarks``), so a resumed watch starts from a recent version and
rarely meets a 410. Backoffs are jittered (between half and one and a half times the step), so
that replicas and kinds failing together do not retry together.

Test hooks, only with ``DASHBOARD_API_TEST_HOOKS=1`` in the environment: SIGUSR2 makes every
reflector re-list when its current watch ends (as after a 410); ``DASHBOARD_API_WATCH_SECONDS``
sets the watch length; ``DASHBOARD_API_LIST_PAGE_DELAY`` delays every LIST page by that many
seconds (to make a sync or re-list observable).
"""

import asyncio
import logging
import os
import random
import signal
import ssl
from typing import Optional

import msgspec
import tornado.httpclient

from dashboard_api.kubeapi.background import BACKGROUND
from dashboard_api.kubeapi.config import USER_AGENT
from dashboard_api.kubeapi.watchclient import watch_client
from dashboard_api.serving.errors import ApiError, from_apiserver

log = logging.getLogger("dashboard_api.kubeapi.watch")

# Objects per LIST page of the watch cache. Up to three pages are in the process at once (one
# arriving, two decoding), whole: at 500 a forced re-list of 150,000 pods rose 8 MiB over the
# live store where 1,000 rose 16-18, and the first sync was no slower (issue #30).
LIST_CHUNK = 500
MAX_LIST_PAGES = 10000
WATCH_SECONDS = 300        # the server ends each watch after about this long; resumed at once
MIN_BACKOFF, MAX_BACKOFF = 0.5, 30.0
FORBIDDEN_RETRY = 60.0     # a resource the service may not list is tried again this often
IDLE_TIMEOUT = 90.0        # a watch that hears nothing this long is cut (--watch-idle-timeout)
EVENT_BATCH = 256          # watch events decoded and made rows by one call in the executor
APPLY_SLICE = 0.02         # seconds of applying events on the loop before it is let go
PENDING_BYTES = 2 << 20    # watch lines read and not applied yet: past this, read no further
CATCH_UP_QUIET = 0.1       # a first watch that read nothing this long after it began: caught up


TEST_HOOKS = os.environ.get("DASHBOARD_API_TEST_HOOKS") == "1"
if TEST_HOOKS:
    WATCH_SECONDS = int(os.environ.get("DASHBOARD_API_WATCH_SECONDS") or WATCH_SECONDS)
PAGE_DELAY = float(os.environ.get("DASHBOARD_API_LIST_PAGE_DELAY") or 0) if TEST_HOOKS else 0.0
_REFLECTORS = set()


def _taken(future):
    """Takes a finished future's outcome, so that its failure is not logged as never
    retrieved."""
    if not future.cancelled():
        future.exception()


class Gone(Exception):
    """The resourceVersion is too old: list again."""


class Silent(Exception):
    """The watch sent neither an event nor a bookmark within the idle limit: its connection
    is taken for dead and closed (resumed from the last version, at once)."""


def jittered(seconds):
    return seconds * random.uniform(0.5, 1.5)


def relist_all():
    """Every reflector lists again when its current watch ends (the SIGUSR2 test hook)."""
    for reflector in list(_REFLECTORS):
        reflector.relist_requested = True


def _install_hooks():
    if TEST_HOOKS and not getattr(_install_hooks, "done", False):
        asyncio.get_event_loop().add_signal_handler(signal.SIGUSR2, relist_all)
        _install_hooks.done = True


class Reflector:
    def __init__(self, cluster, resource, to_row, consumer, http=None, reuse=None,
                 idle=IDLE_TIMEOUT, decode=None):
        self.cluster = cluster
        self.resource = resource
        self.to_row = to_row
        self.decode = decode or _decode   # an object's bytes: the kind's (Kind.decode)
        self.reuse = reuse
        self.consumer = consumer
        self.http = http or watch_client()
        self.idle = idle
        self.restarts = 0
        self.silent = 0           # watches closed for having gone quiet (Silent)
        self.heard = None         # loop time the watch last heard from the API server
        self.relist_requested = False
        self.caught_up = False    # the first watch has applied what it was sent at once
        self._watching = None     # the current watch's state (``watch``)
        self._task = None
        self._stopped = False

    def start(self):
        _install_hooks()
        _REFLECTORS.add(self)
        self._task = asyncio.ensure_future(self.run())
        return self._task

    def stop(self):
        _REFLECTORS.discard(self)
        self._stopped = True
        if self._task is not None:
            self._task.cancel()
        # A cancelled fetch leaves Tornado's connection open until the server ends the watch:
        # close it now (a cluster let go when idle gives its connections back at once).
        self.http.tcp_client.cut()
        self.http.close()

    async def run(self):
        backoff = MIN_BACKOFF
        version = None
        while not self._stopped:
            try:
                if version is None:
                    self.consumer.state("syncing")
                    version = await self.list()
                    self.consumer.state("synced")
                    backoff = MIN_BACKOFF
                version = await self.watch(version)
                backoff = MIN_BACKOFF
                if self.relist_requested:
                    self.relist_requested = False
                    raise Gone()
            except asyncio.CancelledError:
                raise
            except Gone:
                self.restarts += 1
                version = None
            except Silent:
                self.restarts += 1
                self.silent += 1
                # Info, not a warning: a quiet kind's watch lands here every idle period too
                # (the API server's bookmarks are not to be counted on, see _watch_idle).
                log.info("watch of %s heard nothing for %.0fs: reconnecting from "
                         "resourceVersion %s", self.resource.plural, self.idle, version)
            except ApiError as exc:
                self.restarts += 1
                if exc.code in (401, 403, 404):
                    self.consumer.state("unavailable")
                    log.warning("cannot list and watch %s with the service identity (%d): "
                                "lists of it go to the API server", self.resource.plural,
                                exc.code)
                    version = None
                    await asyncio.sleep(jittered(FORBIDDEN_RETRY))
                    continue
                self.consumer.state("syncing")
                wait = jittered(backoff)
                log.info("watch of %s failed (%s); retrying in %.1fs", self.resource.plural,
                         exc.message, wait)
                await asyncio.sleep(wait)
                backoff = min(MAX_BACKOFF, backoff * 2)
            except Exception as exc:  # a network error, a bad reply: keep the cache alive
                self.restarts += 1
                self.consumer.state("syncing")
                wait = jittered(backoff)
                log.info("watch of %s failed (%s: %s); retrying in %.1fs",
                         self.resource.plural, type(exc).__name__, exc, wait)
                await asyncio.sleep(wait)
                backoff = min(MAX_BACKOFF, backoff * 2)

    async def _work(self, fn, *args):
        """``fn(*args)`` in the cluster's executor, as one of the process's few CPU-bound
        background jobs at a time (kubeapi/background.py)."""
        return await BACKGROUND.run(self.cluster.executor.run, fn, *args)

    async def list(self):
        """A full chunked LIST; returns its resourceVersion.

        Pages are decoded in the executor, and turned into rows there while the next page is
        fetched (at most two pages wait for it); the loop passes each page's objects on
        without keeping them, so they are freed in the worker too."""
        jobs = []
        try:
            return await self._pages(jobs)
        finally:
            for job in jobs:
                if not job.done():
                    job.cancel()

    async def _pages(self, jobs):
        handle = self.cluster.service_handle()
        params = {"limit": LIST_CHUNK}
        for _ in range(MAX_LIST_PAGES):
            if PAGE_DELAY:
                await asyncio.sleep(PAGE_DELAY)
            response = await handle.call("GET", self.resource.path(), params)
            if response.status >= 400:
                if response.status == 410 and "continue" in params:
                    raise Gone()
                raise from_apiserver(response.status, response.data)
            data, response = response.data, None
            # one pass over the page: its metadata, for the next page, and each item's bytes
            page = await self._work(_decode_page, data)
            meta, items = page.metadata, page.items or ()
            del data, page
            jobs.append(asyncio.ensure_future(
                self._work(_page_rows, items, self.to_row, self.reuse,
                           getattr(self.consumer, "paged", None), self.decode)))
            del items
            if len(jobs) > 2:
                await asyncio.wait([jobs[-3]])
            if not meta.get("continue"):
                rows = [row for job in jobs for row in await job]
                del jobs[:]
                await self.consumer.relist(rows, meta.get("resourceVersion"),
                                           self.cluster.executor.run)
                return meta.get("resourceVersion")
            params["continue"] = meta["continue"]
        raise ApiError(500, "listing %s did not end" % self.resource.plural)

    async def watch(self, version):
        """One WATCH from ``version``; returns the last version seen when the server ends it."""
        state = self._watching = {"version": version, "buffer": b"", "error": None,
                                  "lines": [], "bytes": 0, "draining": None, "room": None}
        loop = asyncio.get_running_loop()
        self.heard = loop.time()

        def on_chunk(chunk):
            self.heard = loop.time()
            if state["error"] is not None:
                return
            data = state["buffer"] + chunk
            lines = data.split(b"\n")
            state["buffer"] = lines.pop()
            lines = [line for line in lines if line.strip()]
            state["lines"] += lines
            state["bytes"] += sum(map(len, lines))
            if state["lines"] and state["draining"] is None:
                state["draining"] = asyncio.ensure_future(self._drain(state))
            if state["bytes"] > PENDING_BYTES:   # read no further until they are applied
                state["room"] = loop.create_future()
                return state["room"]
            return None

        config = self.cluster.config
        url = self.cluster.url(self.resource.path(), {
            "watch": "1", "resourceVersion": version, "allowWatchBookmarks": "true",
            "timeoutSeconds": str(WATCH_SECONDS)})
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        headers.update(config.service_headers())
        request = tornado.httpclient.HTTPRequest(
            url, headers=headers, streaming_callback=on_chunk,
            header_callback=lambda line: self._header(line),
            connect_timeout=self.cluster.connect_timeout, request_timeout=WATCH_SECONDS + 30,
            ssl_options=service_ssl_context(config))
        fetch = asyncio.ensure_future(self.http.fetch(request, raise_error=True))
        try:
            if await self._watch_idle(fetch, loop):
                # Stale since it last heard anything, not since now.
                self.consumer.state("syncing", since=self.heard)
                raise Silent()
            await fetch
            while state["draining"] is not None and state["error"] is None:
                await state["draining"]   # every event read applied before the next watch
        except tornado.httpclient.HTTPClientError as exc:
            if state["error"] is not None:   # cut for an ERROR event or too many waiting
                raise state["error"]
            if exc.code == 410:
                raise Gone()
            if exc.code == 599:
                raise
            raise ApiError(exc.code, "watch answered %d" % exc.code)
        except (Gone, Silent):
            raise
        except Exception:
            if state["error"] is not None:   # however the cut connection ended the fetch
                raise state["error"]
            raise
        finally:
            if not fetch.done():
                # Left on cancellation (stop): cancelling Tornado's fetch would not close its
                # connection (stop() cuts it) and would make the cut's failure an error log;
                # that failure is expected, taken here.
                fetch.add_done_callback(_taken)
            if state["draining"] is not None and not state["draining"].done():
                state["draining"].cancel()
            self._caught_up()   # however it ended: nothing more to wait for
        if state["error"] is not None:
            raise state["error"]
        return state["version"]

    async def _drain(self, state):
        """Decodes the lines the watch read, a batch at a time in the executor, and applies
        their events in order on the loop, APPLY_SLICE seconds at a time."""
        loop = asyncio.get_running_loop()
        try:
            while state["lines"] and state["error"] is None:
                batch = state["lines"][:EVENT_BATCH]
                del state["lines"][:EVENT_BATCH]
                state["bytes"] -= sum(map(len, batch))
                self._make_room(state)
                events = await self._work(_event_rows, batch, self.decode, self.to_row)
                ends = loop.time() + APPLY_SLICE
                for kind, row, version in events:
                    if kind == "ERROR":
                        # 410 Expired, or any other watch error: list again, never guess
                        state["error"] = Gone()
                        self.http.tcp_client.cut()
                        return
                    state["version"] = version or state["version"]
                    if row is not None:
                        self.consumer.apply(kind, row, state["version"])
                    if loop.time() > ends:
                        await asyncio.sleep(0)
                        ends = loop.time() + APPLY_SLICE
        finally:
            state["draining"] = None
            state["bytes"] = sum(map(len, state["lines"]))
            self._make_room(state, force=True)
        if not state["lines"] and state["error"] is None:
            self._caught_up()

    def _caught_up(self):
        """The first watch after the first LIST has applied every event it had read: what
        happened during the LIST (a backlog of seconds of churn) is in. Told to the consumer
        once (``caught_up``: readiness waits for it, cache/watchcache.py)."""
        if not self.caught_up:
            self.caught_up = True
            hook = getattr(self.consumer, "caught_up", None)
            if hook is not None:
                hook()

    def _quiet_after_headers(self, state):
        """CATCH_UP_QUIET after a watch's headers: nothing read, or all of it applied, means
        nothing was waiting (a quiet kind)."""
        if not state["lines"] and state["draining"] is None and state["error"] is None:
            self._caught_up()

    @staticmethod
    def _make_room(state, force=False):
        """Lets the stream be read again once half of PENDING_BYTES is free (or at once)."""
        room = state["room"]
        if room is not None and not room.done() and (force or
                                                     state["bytes"] <= PENDING_BYTES // 2):
            room.set_result(None)
            state["room"] = None

    async def _watch_idle(self, fetch, loop):
        """Waits for ``fetch`` to end; True when it was cut for hearing nothing (an event, a
        bookmark, the headers) for ``self.idle`` seconds.

        Bookmarks are asked for, and Kubernetes 1.20's watch cache means to send one about
        every minute, but a bookmark carries the version of the kind's last event and goes
        only to watchers behind it (cacher.go: ``event.ResourceVersion > resourceVersion``):
        a watch started from a LIST's newer version gets none until the kind changes. A quiet
        watch on the local 1.20.2 API server got no bookmark in 200 s. So silence past the
        idle limit may be a dead connection or a quiet kind; either way the watch is resumed
        from its last resourceVersion, which costs one request per quiet kind per idle
        period."""
        while not fetch.done():
            quiet = loop.time() - self.heard
            if quiet >= self.idle:
                self.http.tcp_client.cut()
                try:
                    await fetch
                except Exception:  # the cut connection's 599, expected
                    pass
                return True
            await asyncio.wait([fetch], timeout=self.idle - quiet)
        return False

    def quiet(self):
        """Seconds since the current watch last heard from the API server (0: not watching)."""
        if self.heard is None:
            return 0.0
        return max(0.0, asyncio.get_running_loop().time() - self.heard)

    def _header(self, line):
        self.heard = asyncio.get_running_loop().time()
        # The status line arrives first: a 200 means the watch is established and caught up
        # from our version on, so the data can be served again.
        if line.startswith("HTTP/") and " 200 " in line + " ":
            self.consumer.state("synced")
            if not self.caught_up and self._watching is not None:
                asyncio.get_running_loop().call_later(
                    CATCH_UP_QUIET, self._quiet_after_headers, self._watching)

_decode = msgspec.json.Decoder().decode   # faster than ujson, and dict keys are shared


class _Page(msgspec.Struct):
    metadata: dict = {}
    # msgspec evaluates the annotation at import: Optional, not `| None` (Python 3.9)
    items: Optional[list[msgspec.Raw]] = None   # each item's bytes, decoded one at a time


_NULL = msgspec.Raw(b"null")


class _Event(msgspec.Struct):
    type: Optional[str] = None
    # The object's bytes, decoded by the kind's decoder. Raw, not Optional[Raw]: msgspec
    # accepts only null where Raw is in a union, so every event with an object failed this
    # shape and its whole line went to the generic decoder (managedFields and all: a heavy
    # pod's event cost 6% more to its row). A missing object reads as null.
    object: msgspec.Raw = _NULL


_decode_page = msgspec.json.Decoder(_Page).decode
_decode_event = msgspec.json.Decoder(_Event).decode


def _watch_event(line, decode):
    """(type, object) of one watch event's line, the object decoded by ``decode``."""
    try:
        event = _decode_event(line)
    except msgspec.ValidationError:   # not shaped as an event: read as it is
        event = _decode(line)
        obj = event.get("object") or {}
        if event.get("type") != "ERROR" and type(obj) is dict:
            obj = decode(msgspec.json.encode(obj))   # as the kind's decoder gives it
        return event.get("type"), obj
    raw = event.object
    if raw == _NULL:
        return event.type, {}
    return event.type, (decode(raw) if event.type != "ERROR" else _decode(raw)) or {}


def _event_rows(lines, decode, to_row):
    """[(type, row or None, resourceVersion)] of watch event lines, made in the worker: the
    row of an ADDED, MODIFIED or DELETED object; None for a BOOKMARK (its version only) and for
    an ERROR (the watch ends)."""
    out = []
    for line in lines:
        kind, obj = _watch_event(line, decode)
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if kind in ("ADDED", "MODIFIED", "DELETED"):
            out.append((kind, to_row(obj), version))
        elif kind == "ERROR":
            out.append((kind, None, None))
            break
        else:
            out.append((kind, None, version))
    return out


def _page_rows(items, to_row, reuse=None, paged=None, decode=_decode):
    """The rows of one LIST page's items (each one's bytes, ``_decode_page``), made in the
    worker (then ``paged()``).

    During a re-list, ``reuse(obj)`` gives the live store's row of an object whose uid and
    resourceVersion did not change: that row is kept rather than a copy made, so a re-list
    holds the old store plus only what changed (issue #19)."""
    rows = []
    for raw in items:
        # One object decoded at a time, its row made and the object dropped: the short-lived
        # objects of a page are never all alive at once amid the long-lived rows (a page of
        # 1,000 pods decoded whole is ~15 MB of small objects, and the holes they leave in the
        # allocator's arenas stay in the process's RSS).
        obj = decode(raw)
        row = reuse(obj) if reuse is not None else None
        rows.append(row if row is not None else to_row(obj))
    if paged is not None:
        paged()
    return rows


def service_ssl_context(config):
    """The TLS context of the service identity for Tornado's client: the API server's CA and,
    when the configuration has one, the service's client certificate."""
    if not config.host.startswith("https"):
        return None
    base = config.service_base
    ctx = ssl.create_default_context(cafile=base.ssl_ca_cert) if base.ssl_ca_cert \
        else ssl.create_default_context()
    if not base.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if base.cert_file and base.key_file:
        ctx.load_cert_chain(base.cert_file, base.key_file)
    return ctx
