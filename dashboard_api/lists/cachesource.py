"""The watch cache as the list pipeline's source (lists/pipeline.py's ``source`` seam).

A list is answered from the cache only when its kind is synced there, its selectors can be
evaluated exactly (query/selectors.py) and the API server has said, for the caller's own token,
that they may list it in every namespace asked (lists/access.py). Anything else goes to the
pass-through source: the caller's own LIST calls. One object (a detail) is always read from the
API server with the caller's token.

A kind that has synced once is never passed through again while its reflector re-lists: the
last synced store answers (stale) until the new LIST replaces it. A request that arrives before
a kind's first sync waits for it, up to ``sync_wait`` seconds (``--cache-sync-wait``), then gets
a 503 with Retry-After, instead of each such request making a full LIST of its own. How stale
the answer is goes on the request's ``fetch.cache_age`` (the handler's X-Dashboard-Cache-Age).
"""

import asyncio
import math

from dashboard_api.cache.memo import Memo
from dashboard_api.cache.store import SYNCING
from dashboard_api.cache.summed import Summed, SummedRead
from dashboard_api.cache.view import StoreView
from dashboard_api.lists.access import Disagreement
from dashboard_api.query import selectors
from dashboard_api.serving.errors import ApiError

SYNC_WAIT = 10.0
# Seconds a request refused before its kind's first sync is told to wait before asking again.
RETRY_AFTER = 2


class CacheSource:
    def __init__(self, cache, fallback, candidates=None, sync_wait=SYNC_WAIT):
        self.cache = cache
        self.fallback = fallback
        self.access = fallback.access
        self.candidates = candidates
        self.sync_wait = sync_wait
        self.memo = Memo()   # selections of cached rows, shared by the views (cache/view.py)

    async def _authorized_store(self, fetch, resource, namespaces):
        """The store to answer from, after the caller's authorization; None: pass through."""
        if not self.cache.registered.is_set():  # the gateway listens before the cache starts
            await _wait(self.cache.registered, self.sync_wait)
        store = self.cache.store_of(resource)
        if store is None or not (store.serving() or store.state == SYNCING):
            return None, ()   # not cached, or the service may not list it: pass through
        names = namespaces.names if resource.namespaced else ()
        try:
            await self.access.require_list(fetch.handle, resource, names)
        except Disagreement:
            return None, ()
        if not store.serving():
            # the first sync: wait for it rather than each request listing everything itself
            if not await store.wait_first_sync(self.sync_wait):
                if store.state == SYNCING:
                    # a short Retry-After: the retry waits for the sync again (up to
                    # sync_wait), so it is answered as soon as the kind has synced
                    raise NotSynced(min(RETRY_AFTER, max(1, math.ceil(self.sync_wait))))
                return None, ()   # it became unavailable meanwhile
        fetch.cache_age = max(getattr(fetch, "cache_age", 0.0), store.staleness())
        authorized = getattr(fetch, "authorized", None)
        if authorized is not None:
            authorized.append((resource, names))
        return store, names

    async def list(self, fetch, resource, namespaces, labels=None, fields=None):
        match_labels, match_fields = selectors.labels(labels), selectors.fields(fields)
        if match_labels is None or match_fields is None:
            return await self.fallback.list(fetch, resource, namespaces, labels, fields)
        store, names = await self._authorized_store(fetch, resource, namespaces)
        if store is None:
            return await self.fallback.list(fetch, resource, namespaces, labels, fields)
        if not labels and not fields:   # a related read: its list made only when iterated
            return store.related(names)
        if not labels and not names:    # a node's running pods: their sums kept per event
            selected = _summed(store, fields)
            if selected is not None:
                return selected
        candidates = _narrowed(store, names, fields)
        if candidates is None:
            candidates = store.scope(names, objects=True)
        return [obj for obj in candidates
                if match_labels((obj.get("metadata") or {}).get("labels") or {})
                and match_fields(obj)]

    def cached(self, resource):
        """Whether lists of ``resource`` are answered from the cache (its store serves, or is
        syncing for the first time), not passed through."""
        store = self.cache.store_of(resource)
        return store is not None and (store.serving() or store.state == SYNCING)

    def authorize_beside(self, fetch, resource, namespaces):
        """Starts the review a list of ``resource`` in ``namespaces`` will wait for
        (``_authorized_store``) when its answer is not known, without waiting for it. For one
        namespace or all only (the web UI's pages): a list may turn out empty or refused and
        then reads nothing related, so a request of many namespaces (at most MAX_NAMESPACES)
        must not make a review per namespace for nothing."""
        names = namespaces.names if resource.namespaced else ()
        if len(names) <= 1 and self.cached(resource):
            self.access.warm(fetch.handle, "list", resource, names[0] if names else "")

    def answers_at_once(self, fetch, resource, namespaces):
        """Whether a list of ``resource`` in ``namespaces`` is answered from the cache with
        nothing to wait for: its store serves and the caller's right there is remembered (a
        review or a first sync to wait for is waited for beside the others: lists/fetch.py)."""
        if not self.cache.registered.is_set():
            return False
        store = self.cache.store_of(resource)
        if store is None or not store.serving():
            return False
        names = namespaces.names if resource.namespaced else ()
        return all(self.access.known(fetch.handle, "list", resource, ns) is True
                   for ns in names or ("",))

    async def rows(self, fetch, kind, resource, namespaces):
        store, names = await self._authorized_store(fetch, resource, namespaces)
        if store is None:
            return await self.fallback.rows(fetch, kind, resource, namespaces)
        return StoreView(store, kind, names, self.memo)

    async def get(self, fetch, resource, namespace, name):
        return await self.fallback.get(fetch, resource, namespace, name)

    async def namespace_candidates(self, fetch):
        return await self.candidates(fetch) if self.candidates else []


async def _wait(event, timeout):
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except asyncio.TimeoutError:
        pass


class NotSynced(ApiError):
    """A kind still syncing for the first time after the wait: a 503 with Retry-After."""

    def __init__(self, retry_after):
        super().__init__(503, "the gateway's cache of this resource is still syncing with the "
                         "API server; retry in %d seconds" % retry_after, "ServiceUnavailable")
        self.headers["Retry-After"] = str(retry_after)


def _summed(store, fields):
    """A read of one node's objects by a selector the store sums per node (cache/summed.py),
    as their SummedRead: listed only when iterated, their sums kept per event; else None."""
    node, rest = None, []
    for part in fields.split(","):
        key, _, value = part.partition("=")
        if key.strip() == "spec.nodeName" and not value.startswith("=") and node is None:
            node = value.strip()
        else:
            rest.append(part.strip())
    if node is None:
        return None
    for join, _reads in store.joins.values():
        if isinstance(join, Summed) and join.index is store.indexes.get("node") and \
                join.answers(rest):
            return SummedRead(join, node)
    return None


def _narrowed(store, names, fields):
    """The objects a field selector may match, from the store's index of a field it asks to
    equal a value (query/fields.py Field: a node's pods, an object's events), instead of
    every object of the namespaces; None when it asks none of those. The caller still tests
    the whole selector on each, so the answer is the walk's."""
    equal = selectors.equalities(fields)
    for index in store.indexes.values():
        value = equal.get(getattr(index, "path", None))
        if value:
            return [row.obj for row in index.matching(value, names)]
    return None
