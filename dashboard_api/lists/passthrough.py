"""The pass-through source: the caller's own LIST calls, for what the watch cache does not answer.

Used for kinds not synced (or never cached, like secrets), with ``--watch-cache=false`` and
``--proxy``, and for every related read the cache cannot evaluate. The caller's LISTs are made
with ``limit``/``continue`` (one call per namespace of a multi-namespace list, run concurrently)
with bounded memory: identical concurrent lists of one caller share one LIST (SingleFlight); at
most ``--max-large-lists`` lists longer than a chunk are read and decoded at once, and at most as
many requests hold such lists (from the read until the request ends, a ``Lease``); the others
wait up to ``--large-list-wait``, then get a 503 with Retry-After. Objects are slimmed as their
kind's spec says, in the decoding worker, exactly as the cache slims them.

A source has ``list(fetch, resource, namespaces, labels, fields)`` (slim objects),
``rows(fetch, kind, resource, namespaces)`` (a main list's rows, with the paging call) and
``get(fetch, resource, namespace, name)`` (one whole object, always from the API server);
lists/cachesource.py is the other one.
"""

import asyncio
import functools

from dashboard_api.cache import slim
from dashboard_api.kinds import table as kinds
from dashboard_api.lists.access import Access
from dashboard_api.query.page import ListedRows
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.singleflight import SingleFlight

CHUNK = 500           # objects per LIST call
MAX_CHUNKS = 2000     # bound on continue pages of one list (a million objects)


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
        self._flights = SingleFlight()   # (caller, path, labels, fields) -> the objects

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

    def cached(self, resource):
        """Nothing is cached on this path."""
        return False

    def answers_at_once(self, fetch, resource, namespaces):
        """Every list of this path is a LIST to wait for."""
        return False

    async def rows(self, fetch, kind, resource, namespaces):
        """A main list's rows, paged in process (query/page.py ListedRows: their keys are
        filled from the summaries)."""
        return ListedRows.of_objects(kind, await self.list(fetch, resource, namespaces))

    async def get(self, fetch, resource, namespace, name):
        return await fetch.handle.get(resource.path(namespace, name))

    async def _shared(self, fetch, resource, path, labels, fields):
        """One LIST for identical concurrent requests of one caller."""
        key = (Access.identity(fetch.handle), path, labels, fields)
        items = await self._flights.run(
            key, lambda: self._list(fetch, resource, path, labels, fields))
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
