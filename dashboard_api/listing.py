"""The road of a read request: fetch raw objects, summarise, dataselect, decorate, envelope.

``Pipeline`` is that road, built once at start-up (server.make_pipeline) from its seams and handed
to the handlers through the context; nothing here is module state. Seams (each replaceable
without touching the others):

- **source**: where objects come from: cache.source.CacheSource (the shared watch cache, after
  the API server has authorized the caller) over cache.passthrough.ChunkedList (the caller's own
  LIST calls, chunked, coalesced and bounded).
- **Fetch**: one per request; resolves kinds through discovery, runs ``reads.Need``s
  concurrently, keeps the response's non-critical ``errors`` (a forbidden related read becomes an
  ``{"ErrStatus": ...}`` entry and is remembered in ``refused``; the main read's 403 fails the
  request with 403).
- **specs**: what each kind is (dashboard_api/spec, the table in kinds.py).
- **selection**: filter/sort (dataselect, one implementation) and the status block, pure, with
  its results over the cache remembered (``selection.Views``).
- **decorators**: coroutines ``decorate(fetch, kind, page, envelope, query, rel)`` run on every
  list page after paging, with the related objects the list read (the metrics feature's fills
  ``cumulativeMetrics`` and the items' ``metrics``); **detail decorators**:
  ``decorate(fetch, kind, obj, detail, query)`` on every detail (pod and node metrics).

Entry points for handlers: ``Pipeline.list_kind``, ``detail``, ``sublist``, ``assemble``. A
handler that made a Fetch (``Pipeline.fetch``) calls ``Fetch.close`` when its request ends (the
list slots it holds are given back).
"""

import asyncio

from dashboard_api import dataselect, kinds
from dashboard_api.cache import slim
from dashboard_api.cache.access import Access, Budget
from dashboard_api.cache.passthrough import Lease
from dashboard_api.cache.store import Row, ScopeView
from dashboard_api.cluster.discovery import Resource
from dashboard_api.serving.errors import ApiError, is_forbidden
from dashboard_api.reads import ALL, Namespaces, scope_of, standard_needs
from dashboard_api.selection import (Views, filter_key, filtered_indexed, filtering, indexable,
                                     select, select_indexed, sort_spec)
from dashboard_api.serving.singleflight import SingleFlight
from dashboard_api.summaries.common import Related, resource_status

# Lists this long are summarised and selected in the executor: the work is pure, and on the
# event loop it would hold up every other request (tens of ms for 2,000 pods).
OFF_LOOP_ITEMS = 200
# "All namespaces" for a caller who may not list cluster-wide: at most this many namespaces are
# checked one by one (the settings' namespaceFallbackList first).
MAX_CANDIDATE_NAMESPACES = 256


class Fetch:
    """One request's reads, with its caller's handle, and the errors it collected."""

    def __init__(self, handle, cluster, source):
        self.handle = handle
        self.cluster = cluster
        self.source = source
        self.errors = []
        self.refused = {}    # Need.key -> the 403 of a related read (read as empty)
        self.lease = Lease()
        self.reviews = None  # the request's review budget (cache/access.py), made when needed

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

    async def usable_namespaces(self, kind, verb="list", by_name=False):
        """The namespaces where the caller may ``verb`` the kind (``by_name``: the object named
        as the namespace, i.e. the namespace itself), among the settings' fallback list and the
        cluster's namespaces (at most MAX_CANDIDATE_NAMESPACES)."""
        resource = await self.resource(kind)
        candidates = await self.source.namespace_candidates(self)
        access = self.source.access
        if self.reviews is None:
            self.reviews = Budget()
        checks = await asyncio.gather(*(
            access.allowed(self.handle, verb, resource, ns,
                           name=ns if by_name else None, budget=self.reviews)
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


class Pipeline:
    """The list pipeline of the process: its source, its selection cache, its decorators."""

    def __init__(self, source, views=None, decorators=(), detail_decorators=()):
        self.source = source
        self.views = views if views is not None else Views()
        self.decorators = tuple(decorators)
        self.detail_decorators = tuple(detail_decorators)
        self._lists = SingleFlight()   # identical list requests of one caller being answered

    def fetch(self, handle, cluster):
        """A request's Fetch over this pipeline's source."""
        return Fetch(handle, cluster, self.source)

    async def assemble(self, fetch, kind, raw, namespaces, query, rel=None, status=True):
        """The list response of ``kind`` over the raw objects ``raw`` (sublists)."""
        return await self.assemble_rows(fetch, kind, [Row(obj, None, None, None) for obj in raw],
                                        namespaces, query, rel, status)

    async def assemble_rows(self, fetch, kind, rows, namespaces, query, rel=None, status=True):
        """The list response of ``kind`` over ``rows`` (store.Row: an object and, from the
        cache, its precomputed keys)."""
        rel = rel if rel is not None else Related()
        indexed = indexable(kind, rows, query, status)
        if isinstance(rows, ScopeView) and not indexed:
            rows = rows.scoped()
        if kind.keep is not None:
            rows = _kept(kind, rows)
        if len(rows):  # nothing to summarise needs no related reads
            await fetch.gather(standard_needs(kind.list_needs, namespaces), rel)

        async def compute():
            if len(rows) >= OFF_LOOP_ITEMS:
                return await fetch.cluster.executor.run(select, kind, rows, rel, query, status)
            return select(kind, rows, rel, query, status)

        if indexed:  # a page off the cache's sorted index: O(log n + page), no re-sort
            matches = index = None
            spec, run = sort_spec(query, kind.properties), fetch.cluster.executor.run
            if filtering(kind, query):  # an index of the matches, kept per event
                index = await rows.store.ensure_filtered(spec, query.filters, kind.properties,
                                                         run)
            if index is None:
                index = await rows.store.ensure_index(spec, run, walked=filtering(kind, query))
                if filtering(kind, query):  # broad: a walk in the executor, remembered
                    matches = await self.views.get(filter_key(kind, rows, query), lambda: (
                        run(filtered_indexed, kind, index, rows.namespaces, query)))
            page, total, list_status = select_indexed(kind, rows, rel, query, status, matches,
                                                      index)
        else:
            key = Views.key(kind, rows, rel, query, status)
            order, total, list_status = await (self.views.get(key, compute) if key
                                               else compute())
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
        for decorate in self.decorators:
            await decorate(fetch, kind, items, out, query, rel)
        out["errors"] = fetch.errors
        return out

    async def list_kind(self, fetch, kind, namespaces, query):
        """GET /api/v1/{kind}[/{namespaces}].

        Identical concurrent requests of one caller (a UI polling from several tabs) get one
        answer, computed once: on the pass-through path that is one LIST and one summary of it,
        however many ask. "All namespaces" for a caller who may not list the kind cluster-wide
        is the list over the namespaces where they may, rather than a 403."""
        key = (Access.identity(fetch.handle), kind.name, namespaces.names,
               tuple(getattr(query, name) for name in type(query).__slots__),
               getattr(fetch.cluster, "writes", 0))  # a list after a write joins none before it
        return await self._lists.run(key, lambda: self._list_kind(fetch, kind, namespaces, query))

    async def _list_kind(self, fetch, kind, namespaces, query):
        if not kind.namespaced:
            namespaces = ALL
        try:
            rows = await fetch.rows(kind, namespaces)
        except ApiError as exc:
            if not (is_forbidden(exc) and namespaces.all):
                raise
            rows, namespaces = await _usable_rows(fetch, kind, exc)
        return await self.assemble_rows(fetch, kind, rows, namespaces, query)

    async def sublist(self, fetch, parent, sub, query, arg):
        """GET /api/v1/{kind}/{ns}/{name}/{suffix} for an already read parent object."""
        rel = await fetch.gather(sub.needs(parent), Related())
        if sub.respond is not None:
            return sub.respond(parent, rel, arg)
        child = kinds.get(sub.kind)
        raw = sub.pick(parent, rel, arg)
        return await self.assemble(fetch, child, raw, scope_of(parent), query, rel,
                                   status=sub.status)

    async def embedded(self, fetch, parent_kind, parent, embed, query, arg):
        """A sublist inside a detail: a forbidden read leaves an empty list and an error."""
        sub = parent_kind.sublist(embed.suffix)
        inner = Fetch(fetch.handle, fetch.cluster, fetch.source)
        inner.lease = fetch.lease  # one slot for the whole request
        try:
            out = await self.sublist(inner, parent, sub, embed.query or query, arg)
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

    async def detail(self, fetch, kind, namespace, name, query, arg):
        """GET /api/v1/{kind}[/{ns}]/{name}: the detail, its embedded lists and ``errors``."""
        obj = await fetch.get(kind, namespace, name)
        rel = await fetch.settle(lambda r: kind.detail_needs(obj, r), Related())
        out = kind.detail(obj, rel)
        for embed in kind.embeds:
            out[embed.field] = await self.embedded(fetch, kind, obj, embed, query, arg)
        for decorate in self.detail_decorators:
            await decorate(fetch, kind, obj, out, query)
        if "errors" in out:
            out["errors"] = fetch.errors
        return out


def _kept(kind, rows):
    kept = [row for row in rows if kind.keep(row.obj)]
    if len(kept) == len(rows):
        return rows  # keeps the cache's version on it
    return kept


def _items(kind, page, rel):
    return [row.item if row.item is not None else kind.item(row.obj, rel) for row in page]


async def _usable_rows(fetch, kind, refusal):
    if kind.one_by_one:
        names = await fetch.usable_namespaces(kind, "get", by_name=True)
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
