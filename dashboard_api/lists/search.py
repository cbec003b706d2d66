"""A search across kinds (issue #38): the list road's one paging call asked of many kinds at once,
not a second pipeline.

    GET /api/v1/search?q=label:app=web status:crash&itemsPerPage=10&page=1
      -> the query (query/search.py: a 400 naming a bad term)
      -> the kinds searched: every kind of the table whose lists the watch cache answers
         (``kind:`` narrows them); events only when ``kind:`` names them (a word would match
         every event of every object it names); a kind not cached (secrets, leases not opted
         in) only when ``kind:`` names it, through the caller's own LIST (lists/passthrough.py,
         bounded), at most PASSED_KINDS of them; any other is in ``skipped``, with why
      -> per kind, one after the other (what the caller may list asked at once beforehand):
         where the caller may list it, as its list decides (cluster-wide, else the namespaces
         where their rules allow it, each then reviewed as a list's are: lists/access.py), its
         rows (``Fetch.rows``: the cache's view, never a LIST) and the page of its matches
         newest first (``rows.page`` of ``filterBy=name,<query>``: the cache picks a filtered
         index kept per event, or a walk)
      -> ranked: names equal to a word of the query first, then names starting with one, then
         the rest; newest first in each; then kind, namespace and name
      -> the page of them: {kind, objectMeta, status (what its list shows)}; the total, the
         count per kind searched, and what was skipped

What a search reads is bounded: a page of at most MAX_ITEMS_PER_PAGE items, no deeper than
MAX_DEPTH items in all (a query that needs more is to be narrowed); without a word to rank by,
each kind gives only its newest ``page x itemsPerPage`` matches, read off its index; with one,
its matches are ranked in the executor when many.
"""

from __future__ import annotations

import asyncio
import copy
import heapq
import itertools

from dashboard_api.kinds import table as kinds
from dashboard_api.lists.access import Budget
from dashboard_api.lists.fetch import MAX_CANDIDATE_NAMESPACES, Fetch
from dashboard_api.query import search as searches
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import OFF_LOOP_ROWS
from dashboard_api.query.properties import position
from dashboard_api.query.reads import ALL, MAX_NAMESPACES, Namespaces, standard_needs
from dashboard_api.serving.errors import ApiError, bad_request
from dashboard_api.summaries.common import object_meta
from dashboard_api.summaries.related import Related

DEFAULT_ITEMS_PER_PAGE = 10
MAX_ITEMS_PER_PAGE = 500
# The deepest item a search may page to (page x itemsPerPage): each kind gives at most this
# many of its best matches to the ranking, merged on the event loop.
MAX_DEPTH = 1000
# Kinds not in the cache searched through the caller's own LISTs in one search (kind: names
# them): each is a LIST of the whole kind.
PASSED_KINDS = 3
# Reviews one search may make (its rules reviews, one per candidate namespace, and the access
# reviews where the rules are incomplete), beyond the answers already remembered.
MAX_REVIEWS = MAX_CANDIDATE_NAMESPACES + 2 * len(kinds.TABLE)
NEWEST = (("creationTimestamp", False),)
# What is searched only when kind: names it, and why.
ON_REQUEST = {"event": "events are searched only when kind:event asks for them"}
NOT_CACHED = ("not in the gateway's cache (its list goes to the API server): kind:%s searches "
              "it with a LIST of your own")


def kinds_of(query: searches.Search) -> tuple[list, list, dict]:
    """(the kinds to search, in table order; [(kind, reason)] skipped before any read; the
    kinds ``kind:`` names, by name); a 400 naming a ``kind:`` term that names no kind."""
    named, wanted = {}, None
    for term in query.terms:
        if term.prefix != "kind":
            continue
        these = set()
        for value in term.values:
            found = [k for k in kinds.TABLE if value in searches.kind_names(k)]
            if not found:
                raise bad_request("search query: term %r: no kind %r (kinds: %s)" % (
                    term.text, value, ", ".join(k.name for k in kinds.TABLE)))
            these.add(found[0].name)
        wanted = these if wanted is None else wanted & these
    chosen, skipped = [], []
    for kind in kinds.TABLE:
        if wanted is not None and kind.name not in wanted:
            continue
        if wanted is not None:
            named[kind.name] = kind
        if kind.name in ON_REQUEST and kind.name not in named:
            skipped.append((kind, ON_REQUEST[kind.name]))
            continue
        chosen.append(kind)
    return chosen, skipped, named


class _Found:
    """One kind's part of a search: its matches ranked (``ranked``: three lists, each newest
    first, at most the search's depth), how many match, and the reads its statuses need."""

    __slots__ = ("kind", "ranked", "total", "rel", "namespaces")

    def __init__(self, kind, ranked, total, rel, namespaces):
        self.kind = kind
        self.ranked = ranked
        self.total = total
        self.rel = rel
        self.namespaces = namespaces


class Skipped(Exception):
    """A kind not searched, and why (``reason``: shown to the caller)."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class KindsSearch:
    """One search request: its Fetch (the caller's handle, the source, the request's errors),
    its query and its page."""

    def __init__(self, fetch: Fetch, query: searches.Search, items_per_page: int, page: int):
        if items_per_page > MAX_ITEMS_PER_PAGE:
            raise bad_request("itemsPerPage: a search page holds at most %d items, got %d"
                              % (MAX_ITEMS_PER_PAGE, items_per_page))
        if page < 1:
            raise bad_request("page: search pages start at 1, got %d" % page)
        if page * items_per_page > MAX_DEPTH:
            raise bad_request("a search pages no deeper than its first %d items (page %d of "
                              "%d items): narrow the query" % (MAX_DEPTH, page, items_per_page))
        self.fetch = fetch
        self.query = query
        self.items_per_page = items_per_page
        self.page = page
        self.depth = page * items_per_page
        self.words = query.words
        self._rules = None          # the caller's rules per candidate namespace, once asked
        if fetch.reviews is None:
            fetch.reviews = Budget(MAX_REVIEWS)

    async def run(self) -> dict:
        chosen, skipped, named = kinds_of(self.query)
        passed = await self._passed_through(chosen, named)
        await self._ask_access(chosen)
        # One kind after the other: with the caller's answers remembered, a kind's page is read
        # without waiting for anything (but a walk in the executor), so the whole search runs
        # in a few steps of the event loop, not a step per kind behind every other request's.
        results = [await self._kind(kind, passed) for kind in chosen]
        found = []
        for kind, result in zip(chosen, results):
            if isinstance(result, Skipped):
                skipped.append((kind, result.reason))
            else:
                found.append(result)
        order = {kind.name: n for n, kind in enumerate(kinds.TABLE)}
        skipped.sort(key=lambda pair: order[pair[0].name])
        rows = self._ranked(found)
        start = (self.page - 1) * self.items_per_page
        page = rows[start:start + self.items_per_page]
        items = await self._items(page)
        return {
            "listMeta": {"totalItems": sum(f.total for f in found)},
            "items": items,
            "kinds": [{"kind": f.kind.name, "totalItems": f.total} for f in found],
            "skipped": [{"kind": kind.name, "reason": reason} for kind, reason in skipped],
            "errors": self.fetch.errors,
        }

    # --- one kind ------------------------------------------------------------------------------

    async def _ask_access(self, chosen):
        """Asks at once (concurrently) what the caller may list that is not remembered yet:
        each kind cluster-wide, or in the namespaces ``ns:`` names."""
        fetch = self.fetch
        access = fetch.source.access
        wanted = self.query.values("ns")
        asks = []
        for kind in chosen:
            try:
                resource = await fetch.resource(kind)
            except ApiError:
                continue   # not served: _search_kind says so
            for ns in sorted(wanted) if wanted is not None and kind.namespaced else ("",):
                if access.known(fetch.handle, "list", resource, ns) is None:
                    asks.append(access.allowed(fetch.handle, "list", resource, ns,
                                               budget=fetch.reviews))
        if asks:
            for answer in await asyncio.gather(*asks, return_exceptions=True):
                if isinstance(answer, BaseException) and not isinstance(answer, ApiError):
                    raise answer

    async def _passed_through(self, chosen, named):
        """{kind name: None (searched through the caller's LIST) or why not} of the named
        kinds the cache does not answer: the first PASSED_KINDS in table order."""
        out = {}
        for kind in chosen:
            if kind.name not in named:
                continue
            try:
                if await self.fetch.cached(kind):
                    continue
            except ApiError:
                continue   # discovery's error: _search_kind meets it again
            out[kind.name] = None if len(out) < PASSED_KINDS else (
                "at most %d kinds are searched through the API server at once" % PASSED_KINDS)
        return out

    async def _kind(self, kind, passed):
        try:
            return await self._search_kind(kind, passed)
        except Skipped as skip:
            return skip
        except ApiError as exc:
            if exc.code in (403, 404, 429, 503):   # refused, not served, busy, still syncing
                return Skipped(exc.message)
            raise

    async def _search_kind(self, kind, passed):
        fetch = self.fetch
        wanted = self.query.values("ns")
        if wanted is not None and not kind.namespaced:   # no namespace: nothing can match
            return _Found(kind, ([], [], []), 0, None, ALL)
        if kind.name in passed:
            if passed[kind.name] is not None:
                raise Skipped(passed[kind.name])
        elif not await fetch.cached(kind):
            raise Skipped(NOT_CACHED % kind.name)
        namespaces = await self._scope(kind, wanted)
        rows = await fetch.rows(searchable(kind), namespaces)
        rel = Related()
        if self.query.reads_related(kind) and len(rows):
            await fetch.gather(standard_needs(kind.list_needs, namespaces), rel)
        run = fetch.cluster.executor.run
        ranking = bool(self.words)
        filters = (("name", self.query),) if self.query else ()
        if ranking:   # every match, to rank
            query = Query(filters, NEWEST, page=0)
        else:         # the newest matches, as deep as the search pages
            query = Query(filters, NEWEST, self.depth, 1)
        page = await rows.page(query, False, rel, run)
        matches, total = page.rows, page.total
        if ranking:
            ranked = await run(_rank, kind, matches, self.words, self.depth) \
                if len(matches) >= OFF_LOOP_ROWS else _rank(kind, matches, self.words,
                                                              self.depth)
        else:
            ranked = ([], [], list(matches[:self.depth]))
        return _Found(kind, ranked, total, rel, namespaces)

    async def _scope(self, kind, wanted):
        """The namespaces to search ``kind`` in, as its list would answer the caller: those of
        ``ns:`` where they may list it; else all of them when they may list it cluster-wide;
        else (a namespaced kind) the namespaces where their rules allow it, at most
        MAX_NAMESPACES; Skipped when there are none."""
        fetch = self.fetch
        access = fetch.source.access
        resource = await fetch.resource(kind)
        if wanted is not None:
            names = sorted(wanted, key=lambda ns: ns + "/")
            answers = [access.known(fetch.handle, "list", resource, ns) for ns in names]
            if None in answers:   # not remembered (the budget was spent): asked now
                answers = await asyncio.gather(*(access.allowed(
                    fetch.handle, "list", resource, ns, budget=fetch.reviews) for ns in names))
            allowed = [ns for ns, ok in zip(names, answers) if ok]
            if not allowed:
                raise Skipped("forbidden: you may not list %s in %s" % (
                    resource.plural, ", ".join(names)))
            return Namespaces(allowed)
        if await access.allowed(fetch.handle, "list", resource, "", budget=fetch.reviews):
            return ALL
        if not kind.namespaced or kind.one_by_one:
            raise Skipped("forbidden: you may not list %s" % resource.plural)
        rules = await self._namespace_rules()
        allowed, unsure = [], []
        for ns, found in rules:
            says = found.may_list(resource.group, resource.plural) if found is not None \
                else None
            if says:
                allowed.append(ns)
            elif says is None:
                unsure.append(ns)
        if unsure and len(allowed) < MAX_NAMESPACES:
            answers = await asyncio.gather(*(access.allowed(
                fetch.handle, "list", resource, ns, budget=fetch.reviews) for ns in unsure))
            allowed += [ns for ns, ok in zip(unsure, answers) if ok]
        if not allowed:
            raise Skipped("forbidden: you may not list %s in any namespace" % resource.plural)
        allowed = sorted(allowed, key=lambda ns: ns + "/")[:MAX_NAMESPACES]
        return Namespaces(allowed)

    async def _namespace_rules(self):
        """[(namespace, Rules or None)] of the candidate namespaces ("all namespaces" of a
        caller refused cluster-wide, as lists/fetch.py looks for them), asked once per
        search."""
        if self._rules is None:
            self._rules = asyncio.ensure_future(self._ask_rules())
        return await asyncio.shield(self._rules)

    async def _ask_rules(self):
        fetch = self.fetch
        candidates = (await fetch.source.namespace_candidates(fetch))[:MAX_CANDIDATE_NAMESPACES]
        access = fetch.source.access
        answers = await asyncio.gather(*(access.rules(fetch.handle, ns, budget=fetch.reviews)
                                         for ns in candidates))
        return list(zip(candidates, answers))

    # --- the page ------------------------------------------------------------------------------

    def _ranked(self, found):
        """Every kind's ranked matches merged, to the search's depth."""
        order = {kind.name: n for n, kind in enumerate(kinds.TABLE)}
        lists = []
        for part in found:
            for rank, rows in enumerate(part.ranked):
                if rows:   # keyed lazily: the merge reads only as far as the page
                    lists.append(_keyed(rank, order[part.kind.name], part, rows))
        merged = heapq.merge(*lists, key=lambda entry: entry[:5])
        return [entry[5:] for entry in itertools.islice(merged, self.depth)]

    async def _items(self, page):
        """The page's items; the related reads a status needs are read for the kinds on the
        page only."""
        needing = {}
        for part, _row in page:
            if part.kind.search.status_reads and part.rel is not None:
                needing[part.kind.name] = part
        for part in needing.values():   # read from the cache, in line (Fetch.gather)
            await self.fetch.gather(standard_needs(part.kind.list_needs, part.namespaces),
                                    part.rel)
        return [_item(part.kind, row, part.rel) for part, row in page]


_SEARCHABLE = {}


def searchable(kind):
    """``kind`` as a search reads its rows: filtered by the query even where its list ignores
    ``filterBy`` (events), through the same paging call (a filtered index kept per event, a
    walk). The copy keeps the kind's name: the cache's filtered indexes and remembered walks
    are keyed by it and by the filters, which the lists of such a kind never make; and a
    search's scope is always in the store's order, so it never takes the path of the lists'
    remembered selections."""
    if kind.filterable:
        return kind
    found = _SEARCHABLE.get(kind.name)
    if found is None:
        found = copy.copy(kind)
        found.filterable = True
        _SEARCHABLE[kind.name] = found
    return found


def _namespace(row):
    if row.namespace is not None:
        return row.namespace
    return ((row.obj.get("metadata") or {}).get("namespace")) or ""


def _name(row):
    if row.name is not None:
        return row.name
    return ((row.obj.get("metadata") or {}).get("name")) or ""


def _keyed(rank, at, part, rows):
    """(rank, newest first, the kind's place, namespace, name, part, row) of each row."""
    created = position(part.kind.properties, "creationTimestamp") + 1
    for row in rows:
        yield rank, -row.keys[created], at, _namespace(row), _name(row), part, row


def _rank(kind, rows, words, depth):
    """(names equal to a word, names starting with one, the rest) of ``rows`` in their order
    (newest first), each cut at ``depth``."""
    at = position(kind.properties, "name")
    exact, prefix, rest = [], [], []
    for row in rows:
        name = row.keys[at].lower()
        if name in words:
            target = exact
        elif name.startswith(words):
            target = prefix
        else:
            target = rest
        if len(target) < depth:
            target.append(row)
    return exact, prefix, rest


def _item(kind, row, rel):
    status = kind.search.status
    text = status(row, rel if rel is not None else Related()) if status is not None else None
    return {"kind": kind.name, "objectMeta": object_meta(row.obj), "status": text or ""}


async def search(fetch: Fetch, query: searches.Search,
                 items_per_page: int = DEFAULT_ITEMS_PER_PAGE, page: int = 1) -> dict:
    """GET /api/v1/search: the page of ``query``'s matches across kinds (module docstring)."""
    return await KindsSearch(fetch, query, items_per_page, page).run()
