"""The road of a read request, one way down:

    rows -> what must be fetched beside them -> page -> items -> envelope -> decorators

``Pipeline`` is that road, built once per cluster (clusters/context.py) from its seams and handed
to the handlers through the cluster's context; nothing here is module state. Seams (each
replaceable without touching the others):

- **source**: where a list's rows come from (lists/fetch.py ``Fetch.rows``): the watch cache's
  view of a store (cache/view.py), after the API server has authorized the caller, over the
  caller's own LIST calls, chunked, coalesced and bounded (lists/passthrough.py). Both answer
  one paging call, ``rows.page(query, status, rel, run) -> Page`` (query/page.py): the source
  decides how a filter, a sort and a page are read; the road never looks inside.
- **related reads**: the kind's ``list_needs``, read into a ``Related`` by the request's Fetch
  before the page is taken (the items and the status block read them).
- **kinds**: what each kind is (kinds/table.py): its item builder, its page's own reads
  (``page_needs``, ``finish``), its envelope key.
- **decorators**: coroutines ``decorate(fetch, kind, items, envelope, query, rel)`` run on every
  list page (the metrics feature's fills ``cumulativeMetrics`` and the items' ``metrics``);
  **detail decorators**: ``decorate(fetch, kind, obj, detail, query)`` on every detail.

Conditional lists: ``Pipeline.answer`` is ``list_kind`` for a caller who may hold the page
already (``If-None-Match``): once the rows and related reads are known, and before the page is
taken, the page's validator is made from their versions and the caller's access
(lists/validators.py); a page the caller holds is answered "not modified" without being built.
Decorators say what their additions depend on with a ``version(fetch, kind, query, rel)``
coroutine (None: unknown, no validator), and a decorator whose addition could not follow its
version (the sidecar failed during the page) sets ``fetch.unversioned``: that answer leaves
without the validator.

Entry points for handlers: ``Pipeline.list_kind``, ``answer``, ``detail``, ``sublist``,
``assemble``.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable, Sequence

from dashboard_api.cache import slim
from dashboard_api.kinds import table as kinds
from dashboard_api.lists.access import Access
from dashboard_api.lists.fetch import Fetch
from dashboard_api.lists.validators import Proof, Recent, Validators, read_versions
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import OFF_LOOP_ROWS, ListedRows, Rows
from dashboard_api.query.reads import ALL, Namespaces, scope_of, standard_needs
from dashboard_api.serving.conditional import holds
from dashboard_api.serving.errors import ApiError, is_forbidden
from dashboard_api.serving.singleflight import SingleFlight
from dashboard_api.summaries.common import resource_status
from dashboard_api.summaries.related import Related


def envelope(kind: Any, items: list[dict], total: int, status: dict | None = None) -> dict:
    # The specification's envelope names its array `items`; the web UI reads the per-kind key
    # (`pods`, `deployments`...). Lists whose key is not `items` carry both (the same array).
    out = {"listMeta": {"totalItems": total}, kind.list_key: items, "items": items}
    if kind.list_status is not None:
        out["status"] = status or resource_status()
    if kind.metrics:
        out["cumulativeMetrics"] = []
    return out


class Answer:
    """A list answer: its ``body`` (None: the caller holds the page already, a 304) and its
    validator ``tag`` (None: none known before the page; the body's own tag then)."""

    __slots__ = ("body", "tag")

    def __init__(self, body: dict | None, tag: str | None):
        self.body = body
        self.tag = tag


class Pipeline:
    """The list pipeline of one cluster: its source and its decorators."""

    def __init__(self, source: Any, decorators: Sequence[Callable] = (),
                 detail_decorators: Sequence[Callable] = ()):
        self.source = source
        self.decorators = tuple(decorators)
        self.detail_decorators = tuple(detail_decorators)
        self.validators = Validators()   # its pages' tags, under a key of its own
        self.recent = Recent()           # the tags given lately, and what they rest on
        self._lists = SingleFlight()   # identical list requests of one caller being answered

    def fetch(self, handle: Any, cluster: Any) -> Fetch:
        """A request's Fetch over this pipeline's source."""
        return Fetch(handle, cluster, self.source)

    async def list_kind(self, fetch: Fetch, kind: Any, namespaces: Namespaces,
                        query: Query) -> dict:
        """GET /api/v1/{kind}[/{namespaces}].

        Identical concurrent requests of one caller (a UI polling from several tabs) get one
        answer, computed once: on the pass-through path that is one LIST and one summary of it,
        however many ask. "All namespaces" for a caller who may not list the kind cluster-wide
        is the list over the namespaces where they may, rather than a 403."""
        return (await self.answer(fetch, kind, namespaces, query)).body

    async def answer(self, fetch: Fetch, kind: Any, namespaces: Namespaces, query: Query,
                     held: frozenset = frozenset()) -> Answer:
        """``list_kind`` for a caller holding the pages tagged ``held`` (serving/conditional.py
        ``held_tags`` of If-None-Match): the Answer's body is None when they hold this page
        as it is now, decided before the page is built."""
        page = (Access.identity(fetch.handle), kind.name, namespaces.names, _query_key(query))
        if held:   # a page given lately, nothing it rests on moved: nothing read
            found = self.recent.held(page, held, holds)
            if found is not None:
                tag, stores = found
                fetch.cache_age = max([store.staleness() for store in stores] + [0.0])
                return Answer(None, tag)
        key = page + (held, getattr(fetch.cluster, "writes", 0))  # a list after a write
        return await self._lists.run(                             # joins none before it
            key, lambda: self._answer(fetch, kind, namespaces, query, held, page))

    async def _answer(self, fetch, kind, namespaces, query, held, page):
        asked = namespaces if kind.namespaced else ALL
        await fetch.authorize_beside(standard_needs(kind.list_needs, asked))
        rows, namespaces = await self._rows(fetch, kind, namespaces)
        rel = await self._related(fetch, kind, rows, namespaces)
        tag, proofs = await self._made(fetch, kind, rows, namespaces, query, rel)
        # Kept for the next conditional request unless "all namespaces" settled on those the
        # caller may list (a right granted elsewhere would not show in its proofs).
        keep = proofs is not None and namespaces.names == asked.names
        if holds(held, tag):
            body = None
        else:
            body = await self._built(fetch, kind, rows, query, rel, True)
            if getattr(fetch, "unversioned", False):   # the page is not what the tag says
                tag = None
        if tag is not None and keep:
            self.recent.remember(page, tag, *proofs)
        else:
            self.recent.forget(page)
        return Answer(body, tag)

    async def validator(self, fetch: Fetch, kind: Any, namespaces: Namespaces,
                        query: Query) -> tuple[str | None, Rows]:
        """(the validator of the page ``answer`` would give now, its rows), the caller
        authorized as for the page but nothing of the page built: what a subscription to the
        list compares (live/). Raises what the list would."""
        await fetch.authorize_beside(
            standard_needs(kind.list_needs, namespaces if kind.namespaced else ALL))
        rows, namespaces = await self._rows(fetch, kind, namespaces)
        rel = await self._related(fetch, kind, rows, namespaces)
        return (await self._made(fetch, kind, rows, namespaces, query, rel))[0], rows

    async def _rows(self, fetch, kind, namespaces):
        """(the list's rows, the namespaces they cover): "all namespaces" for a caller who
        may not list cluster-wide is those where they may."""
        if not kind.namespaced:
            namespaces = ALL
        try:
            return await fetch.rows(kind, namespaces), namespaces
        except ApiError as exc:
            if not (is_forbidden(exc) and namespaces.all):
                raise
            return await _usable_rows(fetch, kind, exc)

    async def tag(self, fetch: Fetch, kind: Any, rows: Rows, namespaces: Namespaces,
                  query: Query, rel: Related, status: bool = True) -> str | None:
        """The validator of the page of ``rows`` (lists/validators.py), from what was read
        before it; None when something read has no version."""
        return (await self._made(fetch, kind, rows, namespaces, query, rel, status))[0]

    async def _made(self, fetch, kind, rows, namespaces, query, rel, status=True):
        """(the page's validator or None, its proofs or None: ([Proof], stores), what it
        rests on, when it can be proved again without reading, Recent)."""
        version = getattr(rows, "version", None)
        rows_version = version() if version is not None else None
        if rows_version is None or kind.page_needs is not None:
            return None, None   # a page that reads per row (nodes' pods) is known once read
        reads = read_versions(kind.list_needs, rel, fetch.refused)
        if reads is None:
            return None, None
        decorations = []
        for decorate in self.decorators:
            version_of = getattr(decorate, "version", None)
            found = await version_of(fetch, kind, query, rel) if version_of else None
            if found is None:
                return None, None
            decorations.append(found)
        identity = Access.identity(fetch.handle)
        errors = [e["ErrStatus"]["message"] for e in fetch.errors]
        tag = self.validators.tag(identity, kind.name, namespaces.names, _query_key(query),
                                  status, rows_version, reads, errors, decorations)
        return tag, (None if errors else self._proofs(fetch, kind, rows, rows_version, rel,
                                                      query, decorations, identity))

    def _proofs(self, fetch, kind, rows, rows_version, rel, query, decorations, identity):
        """([Proof], stores) of a validator just made, or None when it cannot be proved
        again without reading (see lists/validators.py ``Recent``)."""
        proofs = [Proof(rows.version, rows_version)]
        stores = [getattr(rows, "store", None)]
        for need in kind.list_needs:
            if need not in rel:
                continue
            stamp = getattr(rel[need], "stamp", None)
            if stamp is None:
                return None
            made = stamp()
            proofs.append(Proof(made.key, rel[need].view_key))
            stores.append(made.store)
        for decorate, was in zip(self.decorators, decorations):
            now = getattr(decorate, "version_now", None)
            if now is None:
                return None
            proofs.append(Proof(functools.partial(now, kind, query), was))
        access = getattr(self.source, "access", None)
        if access is None:
            return None
        for resource, names in fetch.authorized:
            for namespace in names or ("",):
                proofs.append(Proof(functools.partial(access.known_for, identity, "list",
                                                      resource, namespace), True))
        return proofs, tuple(store for store in stores if store is not None)

    async def assemble(self, fetch: Fetch, kind: Any, raw: Sequence[dict], namespaces: Namespaces,
                       query: Query, rel: Related | None = None, status: bool = True) -> dict:
        """The list response of ``kind`` over the raw objects ``raw`` (sublists)."""
        return await self.assemble_rows(fetch, kind, ListedRows.of_objects(kind, raw),
                                        namespaces, query, rel, status)

    async def assemble_rows(self, fetch: Fetch, kind: Any, rows: Rows, namespaces: Namespaces,
                            query: Query, rel: Related | None = None,
                            status: bool = True) -> dict:
        """The list response of ``kind`` over ``rows`` (anything with the paging call: a
        cache/view.py StoreView, a query/page.py ListedRows)."""
        rel = await self._related(fetch, kind, rows, namespaces, rel)
        return await self._built(fetch, kind, rows, query, rel, status)

    @staticmethod
    async def _related(fetch, kind, rows, namespaces, rel=None):
        """The related reads of a list of ``rows`` (its kind's ``list_needs``)."""
        rel = rel if rel is not None else Related()
        if len(rows):  # nothing to summarise needs no related reads
            await fetch.gather(standard_needs(kind.list_needs, namespaces), rel)
        return rel

    async def _built(self, fetch, kind, rows, query, rel, status):
        """rows -> page -> items -> envelope -> decorators."""
        run = fetch.cluster.executor.run
        page = await rows.page(query, status, rel, run)
        if len(page.rows) >= OFF_LOOP_ROWS:
            items = await run(_items, kind, page.rows, rel)
        else:
            items = _items(kind, page.rows, rel)
        out = envelope(kind, items, page.total, page.status)
        if kind.page_needs is not None and page.rows:
            page_rel = Related()
            await fetch.gather([n for row in page.rows for n in kind.page_needs(row.obj)],
                               page_rel)
            for item, row in zip(items, page.rows):
                kind.finish(item, row.obj, page_rel)
        for decorate in self.decorators:
            await decorate(fetch, kind, items, out, query, rel)
        out["errors"] = fetch.errors
        return out

    async def sublist(self, fetch: Fetch, parent: dict, sub: Any, query: Query,
                      arg: Callable) -> dict:
        """GET /api/v1/{kind}/{ns}/{name}/{suffix} for an already read parent object."""
        rel = await fetch.gather(sub.needs(parent), Related())
        if sub.respond is not None:
            return sub.respond(parent, rel, arg)
        child = kinds.get(sub.kind)
        raw = sub.pick(parent, rel, arg)
        return await self.assemble(fetch, child, raw, scope_of(parent), query, rel,
                                   status=sub.status)

    async def embedded(self, fetch: Fetch, parent_kind: Any, parent: dict, embed: Any,
                       query: Query, arg: Callable) -> dict:
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

    async def detail(self, fetch: Fetch, kind: Any, namespace: str | None, name: str,
                     query: Query, arg: Callable) -> dict:
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


def _query_key(query):
    return tuple(getattr(query, name) for name in type(query).__slots__)


def _items(kind, page, rel):
    return [row.item if row.item is not None else kind.item(row.obj, rel) for row in page]


async def _usable_rows(fetch, kind, refusal):
    """(rows, namespaces) of "all namespaces" for a caller refused cluster-wide: namespaces
    read one by one where they may get them (``one_by_one``), else the namespaced list over
    the namespaces where they may list the kind; the refusal when there are none."""
    if kind.one_by_one:
        names = await fetch.usable_namespaces(kind, "get", by_name=True)
        if not names:
            raise refusal
        objects = await asyncio.gather(*(fetch.get(kind, None, n) for n in names))
        return ListedRows.of_objects(kind, [slim.slim(kind, o) for o in objects]), ALL
    if not kind.namespaced:
        raise refusal
    names = await fetch.usable_namespaces(kind)
    if not names:
        raise refusal
    namespaces = Namespaces(names)
    return await fetch.rows(kind, namespaces), namespaces
