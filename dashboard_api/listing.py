"""The road of a read request: fetch raw objects, summarise, dataselect, decorate, envelope.

Seams (each replaceable without touching the others):

- **source**: where objects come from. ``ChunkedList`` (this module) makes the caller's own LIST
  calls (``limit``/``continue``, one call per namespace of a multi-namespace list, run
  concurrently), with bounded memory: identical concurrent lists of one caller share one LIST;
  at most a few lists longer than a chunk are read and decoded at once, and at most a few
  requests hold such lists (from the read until the request ends); the others wait, bounded.
  ``cache.source.CacheSource`` answers from the shared watch cache after the API server has
  authorized the caller. A source has ``list(fetch, resource, namespaces, labels, fields)``
  (slim objects, cache/slim.py), ``rows(fetch, kind, resource, namespaces)`` (store.Row
  objects of a main list) and ``get(fetch, resource, namespace, name)`` (one whole object, always
  from the API server).
- **Fetch**: one per request; resolves kinds through discovery, runs ``reads.Need``s
  concurrently, keeps the response's non-critical ``errors`` (a forbidden related read becomes an
  ``{"ErrStatus": ...}`` entry; the main read's 403 fails the request with 403).
- **summaries**: pure functions of the kinds table (``kinds.Kind``).
- **dataselect**: pure filter/sort/page over rows and their keys.
- **DECORATORS**: coroutines ``decorate(fetch, kind, page, envelope, query)`` run on every list
  page after paging (the metrics feature appends one that fills ``cumulativeMetrics`` and the
  pods' ``metrics``). **DETAIL_DECORATORS**: coroutines ``decorate(fetch, kind, obj, detail,
  query)`` run on every detail (pod and node metrics).

Entry points for handlers: ``list_kind``, ``detail``, ``sublist``. A handler that made a Fetch
calls ``Fetch.close`` when its request ends (the list slots it holds are given back).
"""

import asyncio
import functools

from dashboard_api import dataselect, kinds
from dashboard_api.cache import slim
from dashboard_api.cache.access import Access
from dashboard_api.cache.store import Row
from dashboard_api.cluster.discovery import Resource
from dashboard_api.errors import ApiError, is_forbidden
from dashboard_api.reads import ALL, Namespaces, scope_of, standard_needs
from dashboard_api.summaries.common import Related, resource_status

CHUNK = 500           # objects per LIST call
MAX_CHUNKS = 2000     # bound on continue pages of one list (a million objects)
# Lists this long are summarised and selected in the executor: the work is pure, and on the
# event loop it would hold up every other request (tens of ms for 2,000 pods).
OFF_LOOP_ITEMS = 200
DECORATORS = []       # see the module docstring
DETAIL_DECORATORS = []  # see the module docstring
# "All namespaces" for a caller who may not list cluster-wide: at most this many namespaces are
# checked one by one (the settings' namespaceFallbackList first).
MAX_CANDIDATE_NAMESPACES = 256


class Busy(ApiError):
    def __init__(self, retry_after):
        super().__init__(503, "too many large lists are being read from the API server; "
                         "retry in %d seconds" % retry_after, "ServiceUnavailable")
        self.headers["Retry-After"] = str(retry_after)


class ListSlots:
    """At most ``size`` holders at once; the rest wait up to ``wait`` seconds, then get a 503
    with Retry-After. Two of these bound the memory of pass-through lists (without them, N
    clients polling a big list hold N copies of it and of its summaries): one for the LISTs
    being read and decoded, one for the requests holding a large list until they end. Reads
    never wait for requests, so the two cannot wait on each other."""

    def __init__(self, size=2, wait=20.0):
        self.size = size
        self.wait = wait
        self._semaphore = asyncio.Semaphore(size)

    async def acquire(self):
        try:
            await asyncio.wait_for(self._semaphore.acquire(), self.wait)
        except asyncio.TimeoutError:
            raise Busy(max(1, int(self.wait // 4)))
        return self._semaphore.release


class Lease:
    """A request's list slot: taken once, by the first large list the request reads, and given
    back when the request ends. Several reads of one request share it, so a request never
    waits for a second slot while holding one (two such requests would wait on each other)."""

    def __init__(self):
        self._taking = None
        self._ended = False

    async def take(self, slots):
        if self._ended:
            return  # the request is over (its client went away): nothing to hold for it
        if self._taking is None:
            self._taking = asyncio.ensure_future(slots.acquire())
        await asyncio.shield(self._taking)

    def release(self):
        self._ended = True
        taking, self._taking = self._taking, None
        if taking is None:
            return
        if not taking.done():
            taking.cancel()
        elif not taking.cancelled() and taking.exception() is None:
            taking.result()()


class ChunkedList:
    """The pass-through source: the caller's own LIST calls, chunked, bounded and coalesced."""

    def __init__(self, chunk=CHUNK, slots=None, access=None, candidates=None):
        self.chunk = chunk
        self.slots = slots or ListSlots()   # requests holding a large list
        self.reading = ListSlots(self.slots.size, self.slots.wait)   # large LISTs being read
        self.access = access or Access()
        self.candidates = candidates
        self._flights = {}   # (caller, path, labels, fields) -> future of the objects

    async def namespace_candidates(self, fetch):
        """Where "all namespaces" looks for a caller who may not list cluster-wide."""
        return await self.candidates(fetch) if self.candidates else []

    async def list(self, fetch, resource, namespaces, labels=None, fields=None):
        if not resource.namespaced or namespaces.all:
            return await self._shared(fetch, resource, resource.path(), labels, fields)
        parts = await asyncio.gather(*(
            self._shared(fetch, resource, resource.path(ns), labels, fields)
            for ns in namespaces.names))
        return [obj for part in parts for obj in part]

    async def rows(self, fetch, kind, resource, namespaces):
        """A main list's rows; their keys are filled from the summaries (listing.select)."""
        objects = await self.list(fetch, resource, namespaces)
        return [Row(obj, None, None, None) for obj in objects]

    async def get(self, fetch, resource, namespace, name):
        return await fetch.handle.get(resource.path(namespace, name))

    async def _shared(self, fetch, resource, path, labels, fields):
        """One LIST for identical concurrent requests of one caller."""
        key = (Access.identity(fetch.handle), path, labels, fields)
        flight = self._flights.get(key)
        if flight is None:
            flight = asyncio.ensure_future(self._list(fetch, resource, path, labels, fields))
            self._flights[key] = flight
            flight.add_done_callback(lambda _f: self._flights.pop(key, None))
        items = await asyncio.shield(flight)
        if len(items) > self.chunk:
            await fetch.lease.take(self.slots)
        return items

    async def _list(self, fetch, resource, path, labels, fields):
        """One chunked LIST. It may outlive the request that started it (others share it), so
        the slot it reads under is its own, never the request's."""
        items, params, release = [], {"limit": self.chunk}, None
        # Slimmed in the decoding worker, as the kind's spec says (whole without a spec).
        slimmed = functools.partial(slim.slim_all, kinds.of_resource(resource.group,
                                                                     resource.plural))
        if labels:
            params["labelSelector"] = labels
        if fields:
            params["fieldSelector"] = fields
        try:
            for _ in range(MAX_CHUNKS):
                try:
                    page = await fetch.handle.get_page(path, params, slimmed)
                except ApiError as exc:
                    if exc.code != 410 or "continue" not in params:
                        raise
                    # The continue token outlived etcd's compaction: list again in one piece,
                    # as client-go's pager does.
                    params.pop("continue")
                    params.pop("limit")
                    page = await fetch.handle.get_page(path, params, slimmed)
                    return page.get("items") or []
                items.extend(page.get("items") or ())
                token = (page.get("metadata") or {}).get("continue")
                if not token:
                    return items
                if release is None:
                    release = await self.reading.acquire()
                params["continue"] = token
            raise ApiError(500, "listing %s did not end after %d pages" % (path, MAX_CHUNKS))
        finally:
            if release is not None:
                release()


DEFAULT_SOURCE = ChunkedList()


class Fetch:
    """One request's reads, with its caller's handle, and the errors it collected."""

    def __init__(self, handle, cluster, source=None):
        self.handle = handle
        self.cluster = cluster
        self.source = source or DEFAULT_SOURCE
        self.errors = []
        self.refused = {}    # Need.key -> the 403 of a related read (read as empty)
        self.lease = Lease()

    def close(self):
        """The request has ended: its list slot, if it took one, is free again."""
        self.lease.release()

    def forbidden(self, error):
        entry = error.as_status_error()
        if all(e["ErrStatus"]["message"] != error.message for e in self.errors):
            self.errors.append(entry)

    async def resource(self, kind):
        if isinstance(kind, Resource):  # already resolved, e.g. from a CRD's own versions
            return kind
        return await self.cluster.discovery.resolve(self.handle, kind.group, kind.plural,
                                                    kind.versions)

    async def list(self, kind, namespaces=ALL, labels=None, fields=None):
        resource = await self.resource(kind)
        return await self.source.list(self, resource, namespaces, labels, fields)

    async def rows(self, kind, namespaces):
        resource = await self.resource(kind)
        return await self.source.rows(self, kind, resource, namespaces)

    async def get(self, kind, namespace, name):
        resource = await self.resource(kind)
        return await self.source.get(self, resource, namespace, name)

    async def usable_namespaces(self, kind, verb="list"):
        """The namespaces where the caller may ``verb`` the kind, among the settings'
        fallback list and the cluster's namespaces (at most MAX_CANDIDATE_NAMESPACES)."""
        resource = await self.resource(kind)
        candidates = await self.source.namespace_candidates(self)
        access = self.source.access
        checks = await asyncio.gather(*(
            access.allowed(self.handle, verb, resource, ns,
                           name=ns if resource.plural == "namespaces" else None)
            for ns in candidates[:MAX_CANDIDATE_NAMESPACES]))
        return [ns for ns, ok in zip(candidates, checks) if ok]

    async def _read(self, need):
        kind = kinds.get(need.kind) if isinstance(need.kind, str) else need.kind
        empty = [] if need.name is None else None
        try:
            if need.name is None:
                return await self.list(kind, need.namespaces, need.labels, need.fields)
            return await self.get(kind, (need.namespaces.names or ("",))[0], need.name)
        except ApiError as exc:
            if need.critical:
                raise
            if exc.code == 404:
                return empty  # a related object that is gone, or a kind the server lacks
            if not is_forbidden(exc):
                raise
            self.forbidden(exc)
            self.refused.setdefault(need.key, exc)
            return empty

    async def gather(self, needs, rel):
        """Carries out the needs whose key ``rel`` lacks, concurrently, into ``rel``."""
        todo = {}
        for need in needs:
            if need.key not in rel and need.key not in todo:
                todo[need.key] = need
        if not todo:
            return rel
        results = await asyncio.gather(*(self._read(n) for n in todo.values()))
        for key, result in zip(todo, results):
            rel[key] = result
        return rel

    async def settle(self, needs_of, rel, rounds=3):
        """Gathers ``needs_of(rel)`` until it asks for nothing new (needs that depend on
        earlier results, e.g. a pod's controller and then the controller's pods)."""
        for _ in range(rounds):
            needs = [n for n in needs_of(rel) if n.key not in rel]
            if not needs:
                return rel
            await self.gather(needs, rel)
        return rel


def envelope(kind, items, total, status=None):
    # The specification's envelope names its array `items`; the web UI reads the per-kind key
    # (`pods`, `deployments`...). Lists whose key is not `items` carry both (the same array).
    out = {"listMeta": {"totalItems": total}, kind.list_key: items, "items": items}
    if kind.list_status is not None:
        out["status"] = status or resource_status()
    if kind.metrics:
        out["cumulativeMetrics"] = []
    return out


def select(kind, rows, rel, query, status):
    """The pure part of a list: keys (when the source did not bring them), dataselect and the
    status block. Returns (the selected rows in order, totalItems, status or None)."""
    if rows and rows[0].keys is None:  # pass-through: every item is summarised anyway
        props = kind.properties
        for row in rows:
            row.item = kind.item(row.obj, rel)
            row.keys = dataselect.keys_of(row.item, props)
    order, total = dataselect.select_rows(rows, query, kind.properties, kind.filterable)
    list_status = None
    if status and kind.list_status:
        if kind.status_facts and rows and rows[0].facts is not None:
            list_status = kind.list_status(None, rel, facts=[r.facts for r in rows])
        else:
            list_status = kind.list_status([r.obj for r in rows], rel)
    return order, total, list_status


class Views:
    """Selections of cached rows, remembered while their inputs are unchanged.

    A selection (filter, sort, total, status block) over the cache depends only on the
    versions of the stores it read, the namespaces and the query's filters and sorts, never on
    the caller (who was authorized before); so polling clients of one page share it, and a page
    out of 50,000 objects costs a slice. Identical selections being computed are computed once.
    Only the newest version of a selection is kept: an older one is never asked for again.
    """

    def __init__(self, size=64):
        self.size = size
        self._done = {}      # shape -> (versions, selection)
        self._pending = {}   # (shape, versions) -> future

    @staticmethod
    def key(kind, rows, rel, query, status):
        """(shape, versions), or None when an input has no version (read from the API
        server) and so cannot be compared."""
        rows_key = getattr(rows, "view_key", None)
        if rows_key is None:
            return None
        store, generation, namespaces = rows_key
        versions = [generation]
        for need in kind.list_needs:
            value = rel[need]
            version = getattr(value, "view_key", None)
            if version is None and value:
                return None
            versions.append(version)
        return (kind.name, store, namespaces, query.filters, query.sorts, status), \
            tuple(versions)

    async def get(self, key, compute):
        shape, versions = key
        found = self._done.get(shape)
        if found is not None and found[0] == versions:
            return found[1]
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        pending = self._pending[key] = asyncio.ensure_future(compute())
        try:
            selection = await asyncio.shield(pending)
        finally:
            self._pending.pop(key, None)
        self._done.pop(shape, None)
        if len(self._done) >= self.size:
            self._done.pop(next(iter(self._done)))
        self._done[shape] = (versions, selection)
        return selection


VIEWS = Views()


async def assemble(fetch, kind, raw, namespaces, query, rel=None, status=True):
    """The list response of ``kind`` over the raw objects ``raw`` (sublists)."""
    return await assemble_rows(fetch, kind, [Row(obj, None, None, None) for obj in raw],
                               namespaces, query, rel, status)


async def assemble_rows(fetch, kind, rows, namespaces, query, rel=None, status=True):
    """The list response of ``kind`` over ``rows`` (store.Row: an object and, from the cache,
    its precomputed keys)."""
    rel = rel if rel is not None else Related()
    if kind.keep is not None:
        rows = _kept(kind, rows)
    if rows:  # nothing to summarise needs no related reads
        await fetch.gather(standard_needs(kind.list_needs, namespaces), rel)

    async def compute():
        if len(rows) >= OFF_LOOP_ITEMS:
            return await fetch.cluster.executor.run(select, kind, rows, rel, query, status)
        return select(kind, rows, rel, query, status)

    key = Views.key(kind, rows, rel, query, status)
    order, total, list_status = await (VIEWS.get(key, compute) if key else compute())
    page = dataselect.paginate(order, query)
    if len(page) >= OFF_LOOP_ITEMS:
        items = await fetch.cluster.executor.run(_items, kind, page, rel)
    else:
        items = _items(kind, page, rel)
    out = envelope(kind, items, total, list_status)
    if kind.page_needs is not None and page:
        page_rel = Related()
        await fetch.gather([n for row in page for n in kind.page_needs(row.obj)], page_rel)
        for item, row in zip(items, page):
            kind.finish(item, row.obj, page_rel)
    for decorate in DECORATORS:
        await decorate(fetch, kind, items, out, query, rel)
    out["errors"] = fetch.errors
    return out


def _kept(kind, rows):
    kept = [row for row in rows if kind.keep(row.obj)]
    if len(kept) == len(rows):
        return rows  # keeps the cache's version on it
    return kept


def _items(kind, page, rel):
    return [row.item if row.item is not None else kind.item(row.obj, rel) for row in page]


_LISTS = {}   # identical list requests of one caller being answered -> future of the answer


async def list_kind(fetch, kind, namespaces, query):
    """GET /api/v1/{kind}[/{namespaces}].

    Identical concurrent requests of one caller (a UI polling from several tabs) get one
    answer, computed once: on the pass-through path that is one LIST and one summary of it,
    however many ask. "All namespaces" for a caller who may not list the kind cluster-wide is
    the list over the namespaces where they may, rather than a 403."""
    key = (Access.identity(fetch.handle), kind.name, namespaces.names,
           tuple(getattr(query, name) for name in type(query).__slots__))
    flight = _LISTS.get(key)
    if flight is None:
        flight = _LISTS[key] = asyncio.ensure_future(_list_kind(fetch, kind, namespaces, query))
        flight.add_done_callback(lambda _f: _LISTS.pop(key, None))
    return await asyncio.shield(flight)


async def _list_kind(fetch, kind, namespaces, query):
    if not kind.namespaced:
        namespaces = ALL
    try:
        rows = await fetch.rows(kind, namespaces)
    except ApiError as exc:
        if not (is_forbidden(exc) and namespaces.all):
            raise
        rows, namespaces = await _usable_rows(fetch, kind, exc)
    return await assemble_rows(fetch, kind, rows, namespaces, query)


async def _usable_rows(fetch, kind, refusal):
    if kind.name == "namespace":
        names = await fetch.usable_namespaces(kind, "get")
        if not names:
            raise refusal
        objects = await asyncio.gather(*(fetch.get(kind, None, n) for n in names))
        return [Row(slim.slim(kind, o), None, None, None) for o in objects], ALL
    if not kind.namespaced:
        raise refusal
    names = await fetch.usable_namespaces(kind)
    if not names:
        raise refusal
    namespaces = Namespaces(names)
    return await fetch.rows(kind, namespaces), namespaces


async def sublist(fetch, parent, sub, query, arg):
    """GET /api/v1/{kind}/{ns}/{name}/{suffix} for an already read parent object."""
    rel = await fetch.gather(sub.needs(parent), Related())
    if sub.respond is not None:
        return sub.respond(parent, rel, arg)
    child = kinds.get(sub.kind)
    raw = sub.pick(parent, rel, arg)
    return await assemble(fetch, child, raw, scope_of(parent), query, rel, status=sub.status)


async def embedded(fetch, parent_kind, parent, embed, query, arg):
    """A sublist inside a detail: a forbidden read leaves an empty list and an error."""
    sub = parent_kind.sublist(embed.suffix)
    inner = Fetch(fetch.handle, fetch.cluster, fetch.source)
    inner.lease = fetch.lease  # one slot for the whole request
    try:
        out = await sublist(inner, parent, sub, embed.query or query, arg)
    except ApiError as exc:
        if not is_forbidden(exc):
            raise
        inner.forbidden(exc)
        out = envelope(kinds.get(sub.kind), [], 0)
    for error in inner.errors:
        if error not in fetch.errors:
            fetch.errors.append(error)
    out["errors"] = inner.errors
    return out


async def detail(fetch, kind, namespace, name, query, arg):
    """GET /api/v1/{kind}[/{ns}]/{name}: the detail, its embedded lists and ``errors``."""
    obj = await fetch.get(kind, namespace, name)
    rel = await fetch.settle(lambda r: kind.detail_needs(obj, r), Related())
    out = kind.detail(obj, rel)
    for embed in kind.embeds:
        out[embed.field] = await embedded(fetch, kind, obj, embed, query, arg)
    for decorate in DETAIL_DECORATORS:
        await decorate(fetch, kind, obj, out, query)
    if "errors" in out:
        out["errors"] = fetch.errors
    return out

