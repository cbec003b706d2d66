"""The road of a read request: fetch raw objects, summarise, dataselect, decorate, envelope.

Seams (each replaceable without touching the others):

- **source**: ``ChunkedList`` fetches raw objects with the caller's handle (LIST with
  ``limit``/``continue``, one call per namespace of a multi-namespace list, run concurrently).
  A watch cache can replace it: set ``Context.source`` to an object with the same two
  coroutines, ``list(handle, resource, namespaces, labels, fields)`` and
  ``get(handle, resource, namespace, name)``.
- **Fetch**: one per request; resolves kinds through discovery, runs ``reads.Need``s
  concurrently, keeps the response's non-critical ``errors`` (a forbidden related read becomes an
  ``{"ErrStatus": ...}`` entry; the main read's 403 fails the request with 403).
- **summaries**: pure functions of the kinds table (``kinds.Kind``).
- **dataselect**: pure filter/sort/page.
- **DECORATORS**: coroutines ``decorate(fetch, kind, page, envelope, query)`` run on every list
  page after paging (the metrics feature appends one that fills ``cumulativeMetrics`` and the
  pods' ``metrics``). **DETAIL_DECORATORS**: coroutines ``decorate(fetch, kind, obj, detail,
  query)`` run on every detail (pod and node metrics).

Entry points for handlers: ``list_kind``, ``detail``, ``sublist``.
"""

import asyncio

from dashboard_api import dataselect, kinds
from dashboard_api.cluster.discovery import Resource
from dashboard_api.errors import ApiError, is_forbidden
from dashboard_api.reads import ALL, scope_of, standard_needs
from dashboard_api.summaries.common import Related, resource_status

CHUNK = 500           # objects per LIST call
MAX_CHUNKS = 2000     # bound on continue pages of one list (a million objects)
# Lists this long are summarised and selected in the executor: the work is pure, and on the
# event loop it would hold up every other request (tens of ms for 2,000 pods).
OFF_LOOP_ITEMS = 200
DECORATORS = []       # see the module docstring
DETAIL_DECORATORS = []


class ChunkedList:
    """The default source: plain LIST calls through the caller's handle."""

    def __init__(self, chunk=CHUNK):
        self.chunk = chunk

    async def list(self, handle, resource, namespaces, labels=None, fields=None):
        if not resource.namespaced or namespaces.all:
            return await self._list(handle, resource.path(), labels, fields)
        parts = await asyncio.gather(*(
            self._list(handle, resource.path(ns), labels, fields) for ns in namespaces.names))
        return [obj for part in parts for obj in part]

    async def _list(self, handle, path, labels, fields):
        items, params = [], {"limit": self.chunk}
        if labels:
            params["labelSelector"] = labels
        if fields:
            params["fieldSelector"] = fields
        for _ in range(MAX_CHUNKS):
            try:
                page = await handle.get(path, params)
            except ApiError as exc:
                if exc.code != 410 or "continue" not in params:
                    raise
                # The continue token outlived etcd's compaction: list again in one piece, as
                # client-go's pager does.
                params.pop("continue")
                params.pop("limit")
                return (await handle.get(path, params)).get("items") or []
            items.extend(page.get("items") or ())
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            params["continue"] = token
        raise ApiError(500, "listing %s did not end after %d pages" % (path, MAX_CHUNKS))

    async def get(self, handle, resource, namespace, name):
        return await handle.get(resource.path(namespace, name))


DEFAULT_SOURCE = ChunkedList()


class Fetch:
    """One request's reads, with its caller's handle, and the errors it collected."""

    def __init__(self, handle, cluster, source=None):
        self.handle = handle
        self.cluster = cluster
        self.source = source or DEFAULT_SOURCE
        self.errors = []

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
        return await self.source.list(self.handle, resource, namespaces, labels, fields)

    async def get(self, kind, namespace, name):
        resource = await self.resource(kind)
        return await self.source.get(self.handle, resource, namespace, name)

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


def summarise(kind, raw, rel, query, status):
    """The pure part of a list: summaries, dataselect and the status block."""
    items = [kind.summary(obj, rel) for obj in raw]
    page, total = dataselect.select(items, query, kind.properties, kind.filterable)
    list_status = kind.list_status(raw, items, rel) if status and kind.list_status else None
    return items, page, total, list_status


async def assemble(fetch, kind, raw, namespaces, query, rel=None, status=True):
    """The list response of ``kind`` over the raw objects ``raw``."""
    rel = rel if rel is not None else Related()
    if kind.keep is not None:
        raw = [obj for obj in raw if kind.keep(obj)]
    if raw:  # nothing to summarise needs no related reads
        await fetch.gather(standard_needs(kind.list_needs, namespaces), rel)
    if len(raw) >= OFF_LOOP_ITEMS:
        items, page, total, list_status = await fetch.cluster.executor.run(
            summarise, kind, raw, rel, query, status)
    else:
        items, page, total, list_status = summarise(kind, raw, rel, query, status)
    out = envelope(kind, page, total, list_status)
    if kind.page_needs is not None and page:
        raw_of = {id(item): obj for item, obj in zip(items, raw)}
        page_rel = Related()
        await fetch.gather([n for item in page for n in kind.page_needs(raw_of[id(item)])],
                           page_rel)
        for item in page:
            kind.finish(item, raw_of[id(item)], page_rel)
    for decorate in DECORATORS:
        await decorate(fetch, kind, page, out, query)
    out["errors"] = fetch.errors
    return out


async def list_kind(fetch, kind, namespaces, query):
    """GET /api/v1/{kind}[/{namespaces}]."""
    if not kind.namespaced:
        namespaces = ALL
    raw = await fetch.list(kind, namespaces)
    return await assemble(fetch, kind, raw, namespaces, query)


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

