"""The shared watch cache: one store per cached kind, filled by watches with the service's own
identity, read by every caller after the API server has authorized them (lists/access.py).

What a store keeps of each object and the indexes it keeps are declared in the kind's spec
(``Kind.projection``, ``Kind.indexes``). Kinds whose spec says ``cached=False`` (secrets: their
list goes to the API server with the caller's token) are never cached, nor the objects of
custom resources; kinds whose spec says ``OPT_IN`` (leases) only when --watch-cache-opt-in
names them.
"""

import asyncio
import logging
import signal

from dashboard_api.cache import heap, slim
from dashboard_api.cache.applied import Applied
from dashboard_api.cache.joined import join_stores
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import SYNCING, UNAVAILABLE, Store
from dashboard_api.kinds import table as kinds
from dashboard_api.kinds.kind import OPT_IN
from dashboard_api.kubeapi.watch import TEST_HOOKS, Reflector

log = logging.getLogger("dashboard_api.cache")

# The order of every list's first page in the web UI: newest first (it always sends
# sortBy=d,creationTimestamp unless a column is clicked). A large store's sorted index for it is
# built with its rows, before the store says it has synced (cache/orders.py ``warm``): the
# first user to open a list after /readyz says ready does not wait for it (issue #41; built
# after the sync, it held the first pages for seconds).
FIRST_PAGE_SORT = (("creationTimestamp", False),)
# The columns the web UI sorts by: a kind's own first (an event's Last and First seen, its list's
# first page being the newest last seen; a pod's Status), then Created and Name. A large store
# builds their indexes right after its first sync, in the executor (cache/orders.py ``later``),
# up to LATER_SORTS of them, before readiness says ready (``Cached.settled``): one way round
# each, times newest first, the other way read off it backwards (cache/sorted.py
# ``MirrorOrder``), and none for the first page's column (its index serves both ways). Any
# other sort (Namespace, a second column) is built when first asked, its first pages a partial
# selection meanwhile (cache/view.py); a column whose values are few (a status, an event's
# Reason) is read by their counts (cache/categories.py). Each index costs ~2.4 MiB and every
# event a bisection in it, at 150,000 pods.
OWN_COLUMNS = ("lastSeen", "firstSeen", "status")
UI_COLUMNS = OWN_COLUMNS + ("creationTimestamp", "name")
LATER_SORTS = 6
# Readiness waits for a store to settle (``Cached.settled``) at most this long after it synced.
SETTLE_LIMIT = 30.0


def later_sorts(kind):
    """The UI's sorts (``UI_COLUMNS``) of ``kind``, in that order, one way round each (times
    newest first), but the first page's column."""
    first = {prop for prop, _ascending in FIRST_PAGE_SORT}
    props = kind.properties
    return tuple(((prop, not props[prop].time),) for prop in UI_COLUMNS
                 if prop in props and prop not in first)[:LATER_SORTS]


def cached_names(opt_in=()):
    """The kinds the cache holds by default: every kind whose spec says ``cached``, and those
    whose spec says ``OPT_IN`` (leases) only when named in ``opt_in``."""
    return [k.name for k in kinds.TABLE
            if k.cached is True or (k.cached == OPT_IN and k.name in opt_in)]


class Cached:
    """One kind's store and the reflector that fills it."""

    def __init__(self, kind, resource, applied=None):
        self.kind = kind
        self.resource = resource
        self.store = Store(kind, kind.indexes)
        if all(prop in kind.properties for prop, _ in FIRST_PAGE_SORT):
            self.store.orders.warm = (FIRST_PAGE_SORT,)
        self.store.orders.later = later_sorts(kind)
        self.reflector = None
        self.applied = applied if applied is not None else Applied()
        self.caught = False         # the reflector's ``caught_up``
        self._settled = False
        self._last = None           # the record to_row made last (workers: any one will do)

    def to_row(self, obj):
        """The row of an object as the kind's decoder gives it (Kind.decode: projected when
        ``decode_projects``, else projected here), sharing what did not change with the row it
        replaces, and a new object what equals its neighbour's (Store.neighbour; in a first
        LIST, whose store is empty, the record made just before it: an API server lists a
        replica set's pods, or an object's events, together). Made in the worker: rows never
        change, a dict read is atomic, and any record of the kind will do as the last one
        made."""
        kind = self.kind
        record = slim.record(obj if kind.decode_projects else kind.slim(obj))
        meta = record.get("metadata") or {}
        namespace, name = meta.get("namespace") or "", meta.get("name") or ""
        old = self.store.rows.get((namespace, name))
        if old is not None:
            return row_of(self.kind, slim.pooled(record, old.obj), old)
        near = self.store.neighbour(namespace, name)
        row = row_of(self.kind, slim.pooled(record, near.obj if near is not None else self._last))
        self._last = row.obj
        return row

    # The reflector's consumer interface.
    async def relist(self, rows, version, run):
        """A full LIST's rows (first sync or re-list), without holding the event loop:
        ``run`` (the executor) computes what changed and, when much did, the new state
        (Store.relist)."""
        large = max(len(rows), len(self.store)) >= heap.TRIM_ROWS
        await self.store.relist(rows, version, run)
        self.applied.relisted(self.store)
        if large:   # the pages of the LIST and of the previous store back to the system
            asyncio.get_running_loop().run_in_executor(None, heap.trim)

    def paged(self):
        """A LIST page's rows are made (in the worker): during the first sync, everything
        alive goes into the collector's permanent generation at once (heap.freeze_heap, as
        after each full LIST), so young collections stop walking the rows made so far (about
        a tenth of start-up's work otherwise). Later LISTs wait for their end, as before."""
        if not self.store.synced_once:
            heap.freeze_heap()

    def apply(self, event, row, version):
        self.store.apply(event, row, version)
        self.applied.notify(event, row)   # read your own writes (cache/applied.py)

    def caught_up(self):
        """The reflector's first watch has applied the events of the first LIST's time."""
        self.caught = True

    def settled(self):
        """Whether the store is ready to answer at its steady speed (issue #41: ready means
        ready): synced, its first watch caught up with what changed during the first LIST, and
        the web UI's later sorts built; or SETTLE_LIMIT seconds after it synced, whatever is
        left (a watch failing, a build overtaken by re-lists), so that no replica stays out
        of rotation for it. A store the service may not list is settled (passed through)."""
        store = self.store
        if self._settled or store.state == UNAVAILABLE:
            return True
        if not store.synced_once:
            return False
        if self.caught and not store.orders.later_pending():
            self._settled = True
        elif store.clock() - store.synced_at > SETTLE_LIMIT:
            log.info("cache of %s: settled without %s", self.kind.name,
                     " and ".join(what for what, missing in (
                         ("catching up with its watch", not self.caught),
                         ("its later sorts", store.orders.later_pending())) if missing))
            self._settled = True
        return self._settled

    def state(self, name, since=None):
        """``since``: the event loop's time from which the store is stale (the loop's clock
        and the store's are both monotonic)."""
        if name != self.store.state:
            log.info("cache of %s: %s (%d objects)", self.kind.name, name, len(self.store))
        if since is not None:
            since += self.store.clock() - asyncio.get_running_loop().time()
        self.store.set_state(name, since)


class WatchCache:
    """The process's stores, one per cached kind (``names``: kinds-table names, default
    ``cached_names(opt_in)``), each filled by its own reflector; ``store_for`` says which one
    may answer a resource now."""

    def __init__(self, cluster, names=None, opt_in=(), idle=None):
        self.cluster = cluster
        cacheable = [k.name for k in kinds.TABLE if k.cached]   # True or OPT_IN
        self.names = cached_names(opt_in) if names is None else [
            n for n in names if n in cacheable]
        self.cached = {}            # (group, plural) -> Cached
        self.by_name = {}           # kind name -> Cached
        self.started = False        # start() called
        self.registered = asyncio.Event()   # set once start() has made every kind's store
        self.applied = Applied()    # writes waiting for their watch events
        self.idle = idle            # --watch-idle-timeout (None: the reflector's default)

    async def start(self):
        """Resolves the kinds with the service identity and starts their watches."""
        self.started = True
        heap.configure()
        if TEST_HOOKS:   # SIGUSR1: where the memory is, for the benchmark's soak
            asyncio.get_running_loop().add_signal_handler(
                signal.SIGUSR1,
                lambda: log.warning("memory: %s", dict(heap.report(), **slim.tables())))
        try:
            await self._register()
        finally:
            self.registered.set()

    async def _register(self):
        handle = self.cluster.service_handle()
        for name in self.names:
            kind = kinds.get(name)
            try:
                resource = await self.cluster.discovery.resolve(handle, kind.group, kind.plural,
                                                                kind.versions)
            except Exception as exc:  # not served, or discovery refused: lists pass through
                log.info("not caching %s: %s", name, getattr(exc, "message", exc))
                continue
            cached = Cached(kind, resource, self.applied)
            idle = {} if self.idle is None else {"idle": self.idle}
            cached.reflector = Reflector(self.cluster, resource, cached.to_row, cached,
                                         reuse=cached.store.reusable, decode=kind.decode,
                                         **idle)
            self.cached[(resource.group, resource.plural)] = cached
            self.by_name[name] = cached
            cached.reflector.start()
        join_stores({name: cached.store for name, cached in self.by_name.items()})

    def stop(self):
        for cached in self.cached.values():
            if cached.reflector is not None:
                cached.reflector.stop()

    def store_for(self, resource):
        """The store serving ``resource`` (same group, plural and version) now, or None: a
        synced store, or one that synced once and is re-listing (stale, still answering)."""
        store = self.store_of(resource)
        return store if store is not None and store.serving() else None

    def store_of(self, resource):
        """The store kept for ``resource`` whatever its state, or None."""
        cached = self.cached.get((resource.group, resource.plural))
        if cached is None or cached.resource.version != resource.version:
            return None
        return cached.store

    def synced_store(self, group, plural):
        """The store of (group, plural) in whatever version it is cached, while it answers lists
        (synced, or re-listing after a first sync), else None."""
        cached = self.cached.get((group, plural))
        return cached.store if cached is not None and cached.store.serving() else None

    def synced(self):
        """Whether no kind is still syncing (each is synced, or unavailable and passed
        through)."""
        return all(c.store.state != SYNCING for c in self.cached.values())

    def settled(self):
        """Whether every kind is ``settled`` (Cached): what a readiness check asks. Once
        settled, a kind re-syncing later (a watch resumed, an API server away) still answers
        from what it has."""
        return all(c.settled() for c in self.cached.values())

    def states(self):
        """{kind: (state, objects, events applied, watch restarts)} for /metrics. Until every
        kind is registered, those not yet are syncing: a reader of /metrics never takes the
        first kinds synced for the whole cache. A cache not started has no kinds."""
        states = {name: (c.store.state, len(c.store), c.store.events,
                         c.reflector.restarts if c.reflector else 0)
                  for name, c in self.by_name.items()}
        if self.started and not self.registered.is_set():
            for name in self.names:
                states.setdefault(name, (SYNCING, 0, 0, 0))
        return states

