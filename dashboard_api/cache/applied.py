"""Read your own writes: a write through the gateway answers once this replica's watch cache has
applied it, so the caller's next list of that kind shows it.

After a successful POST, PUT, PATCH or DELETE with the caller's handle (``own_writes`` gives a
request its handle), the written object is known from the API server's reply: its uid and
resourceVersion (a Scale's are its parent's). The write then waits, at most ``timeout`` seconds,
until the cache's store of that resource applies a watch event of that uid with that very
resourceVersion (versions are opaque strings: compared for equality, never ordered), or its
DELETED event. A delete waits for the DELETED event or the object's absence, unless the reply
says the deletion is pending (finalizers, a grace period): the object then stays listed with
its deletion timestamp, and the event of that state is enough. An event may be applied (and
followed by the next change) before the write's reply reaches the event loop: the events of the
last seconds are remembered as (uid, resourceVersion) pairs, bounded in count and age. A re-list
(``relisted``) settles what the store now holds.

Nothing waits for kinds the cache does not hold or has not synced (secrets, custom objects,
``--watch-cache=false``, ``--proxy``), nor for replies without an object (an eviction). When the
time runs out the write still succeeds and its reply carries ``Warning: 299 - "..."`` saying a
list may lag. Waiters are futures resolved by the store's apply path on the event loop; each is
removed when it resolves or times out, and at most ``limit`` wait at once.

Identical concurrent lists of one caller share one answer (lists.pipeline.Pipeline.list_kind);
a list asked after a write must not join one asked before it, so each write counts in
``cluster.writes``, which that sharing's key includes.
"""

import asyncio
import copy
import logging
import time
import urllib.parse
import weakref

import cachetools

log = logging.getLogger("dashboard_api.cache.applied")

WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))
SAME_OBJECT = frozenset(("", "scale", "status"))   # subresources whose reply is the object's
LIMIT = 10000
RECENT, HORIZON = 20000, 10.0   # events remembered: at most this many, for this many seconds
LAG_WARNING = ('299 - "written, but lists of %s from this gateway may not show it yet: its '
               'watch cache did not apply the change within %gs"')


def _meta(obj):
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _uid(obj):
    return _meta(obj).get("uid")


def target(path):
    """(group, plural, namespace, name, subresource) of an API path (name "" for a
    collection), or None for a path that names no resource."""
    parts = [urllib.parse.unquote(p) for p in path.split("?", 1)[0].strip("/").split("/")]
    if parts[:2] == ["api", "v1"]:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not rest or not rest[0]:
        return None
    return (group, rest[0], namespace, rest[1] if len(rest) > 1 else "",
            rest[2] if len(rest) > 2 else "")


def _pending_deletion(obj):
    """Whether a DELETE reply is the object still there, waiting for finalizers or a grace
    period (else it is gone, or about to be: wait for DELETED)."""
    meta = _meta(obj)
    if not meta.get("deletionTimestamp") or not meta.get("resourceVersion"):
        return False
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    return bool(meta.get("finalizers") or spec.get("finalizers")
                or (meta.get("deletionGracePeriodSeconds") or 0) > 0)


class Waiter:
    """One write waiting for its event: ``version`` the resourceVersion to see (None: only the
    object's deletion will do), ``gone`` whether the object's absence settles it too."""

    __slots__ = ("uid", "version", "gone", "namespace", "name", "future")

    def __init__(self, uid, version, gone, namespace, name):
        self.uid = uid
        self.version = version
        self.gone = gone
        self.namespace = namespace
        self.name = name
        self.future = None

    def seen_in(self, store):
        """Whether ``store`` already holds the state this waiter waits for."""
        row = store.rows.get((self.namespace, self.name))
        meta = _meta(row.obj) if row is not None else {}
        if meta.get("uid") != self.uid:
            return self.gone
        return self.version is not None and meta.get("resourceVersion") == self.version


class Applied:
    """The waiters of one process, by uid (unique across kinds).

    The watch event of a write may be applied, and even followed by the next change, before
    the write's reply reaches the event loop: the events of the last ``horizon`` seconds (at
    most ``size``) are remembered as (uid, resourceVersion), (uid, None) for a deletion."""

    def __init__(self, limit=LIMIT, size=RECENT, horizon=HORIZON, clock=time.monotonic):
        self.limit = limit
        self.size = size
        self.horizon = horizon
        # (uid, version) -> True, for ``horizon`` seconds; the oldest go first beyond ``size``
        self._recent = cachetools.TTLCache(size, horizon, timer=clock)
        self._waiting = {}   # uid -> [Waiter]
        self._count = 0
        self.settled = 0     # writes that waited for their event and saw it
        self.lagged = 0      # writes answered with the lag warning

    def __len__(self):
        return self._count

    # --- the store's side (event loop) ------------------------------------------------------

    def notify(self, event, row):
        """Called after a store applied a watch event."""
        meta = _meta(row.obj)
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        self._remember((uid, None if event == "DELETED" else version))
        waiters = self._waiting.get(uid) if self._waiting else None
        if not waiters:
            return
        for waiter in waiters:
            if event == "DELETED" or (waiter.version is not None and waiter.version == version):
                _resolve(waiter)

    def _remember(self, key):
        self._recent[key] = True

    def _seen_recently(self, waiter):
        return (waiter.uid, None) in self._recent or \
            (waiter.version is not None and (waiter.uid, waiter.version) in self._recent)

    def relisted(self, store):
        """Called after a store was replaced by a full LIST."""
        for waiters in list(self._waiting.values()):
            for waiter in waiters:
                if waiter.seen_in(store):
                    _resolve(waiter)

    # --- the writer's side ------------------------------------------------------------------

    async def wait(self, store, waiter, timeout):
        """True once ``store`` has applied what ``waiter`` waits for; False after
        ``timeout`` seconds (or at once when too many wait)."""
        if waiter.seen_in(store) or self._seen_recently(waiter):
            return True
        if timeout <= 0 or self._count >= self.limit:
            return False
        waiter.future = asyncio.get_event_loop().create_future()
        self._waiting.setdefault(waiter.uid, []).append(waiter)
        self._count += 1
        try:
            await asyncio.wait_for(waiter.future, timeout)
            return True
        except asyncio.TimeoutError:
            return False
        finally:
            self._remove(waiter)

    def _remove(self, waiter):
        waiters = self._waiting.get(waiter.uid)
        if waiters is None or waiter not in waiters:
            return
        waiters.remove(waiter)
        self._count -= 1
        if not waiters:
            del self._waiting[waiter.uid]


def _resolve(waiter):
    if waiter.future is not None and not waiter.future.done():
        waiter.future.set_result(True)


def written(method, path, response):
    """The waiter of a successful write (None: it wrote no object) and the resource's
    (group, plural)."""
    where = target(path)
    if where is None or where[4] not in SAME_OBJECT:
        return None, None
    group, plural, namespace, name, _sub = where
    try:
        obj = response.json()
    except ValueError:
        obj = None
    meta = _meta(obj)
    if method == "DELETE":
        details = obj.get("details") if isinstance(obj, dict) else None
        uid = meta.get("uid") or (details.get("uid") if isinstance(details, dict) else None)
        if not uid or not name:
            return None, None
        version = meta.get("resourceVersion") if _pending_deletion(obj) else None
        return Waiter(uid, version, True, namespace, name), (group, plural)
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    if not uid or not version:
        return None, None
    return Waiter(uid, version, False, meta.get("namespace") or namespace,
                  meta.get("name") or name), (group, plural)


async def settle(cache, method, path, response, timeout):
    """After a successful write: True when the cache shows it (or need not), else False."""
    waiter, resource = written(method, path, response)
    if waiter is None:
        return True
    return await _settled(cache, waiter, resource, method, path, timeout)


async def _settled(cache, waiter, resource, method, path, timeout):
    store = cache.synced_store(*resource)
    if store is None:
        return True
    if await cache.applied.wait(store, waiter, timeout):
        cache.applied.settled += 1
        return True
    cache.applied.lagged += 1
    log.info("the watch cache of %s did not apply %s %s within %gs", resource[1], method,
             path, timeout)
    return False


async def deleted(handler, group, plural, objects):
    """After a handler saw ``objects`` gone from the API server by other means than its own
    DELETE (a drain's evictions): waits until the cache applied their deletions too."""
    cache = handler.cluster.cache
    timeout = handler.ctx.options.read_your_writes_timeout
    store = cache.synced_store(group, plural) if cache is not None else None
    try:
        if store is None or not objects:
            return
        waiters = [Waiter(_uid(obj), None, True, _meta(obj).get("namespace") or "",
                          _meta(obj).get("name")) for obj in objects]
        seen = await asyncio.gather(*(cache.applied.wait(store, w, timeout) for w in waiters))
        if not all(seen):
            _lagging(handler, plural, timeout)
    finally:
        handler.cluster.api.writes += 1


def _lagging(handler, plural, timeout):
    warning = LAG_WARNING % (plural, timeout)
    handler.lag_warnings.append(warning)
    handler.add_header("Warning", warning)


def own_writes(handle, cache, handler, timeout):
    """The request's copy of the caller's handle (handles may be shared by --cache-enabled)
    whose successful writes of objects wait for the watch cache (``cache`` None: the
    pass-through path, no wait), then count in ``cluster.writes``: a list asked after the
    write never joins one asked before it (lists.pipeline.Pipeline.list_kind).

    The handler is reached weakly: the copy is kept by the handler's reads, and a strong
    reference back made a cycle that only the collector freed, with the whole request
    (issue #30)."""
    handler = weakref.ref(handler)

    async def after_write(method, path, response):
        if method not in WRITES or response.status >= 300:
            return
        waiter, resource = written(method, path, response)
        if waiter is None:
            return
        try:
            if cache is not None and \
                    not await _settled(cache, waiter, resource, method, path, timeout) and \
                    handler() is not None:    # else the request is gone: no one to warn
                _lagging(handler(), resource[1], timeout)
        finally:
            handle.cluster.writes += 1

    own = copy.copy(handle)
    own.after_write = after_write
    return own
