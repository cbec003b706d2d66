"""One request's reads: its caller's handle, its cluster, the list source, and the errors the
response carries.

``Fetch`` resolves kinds through discovery, reads rows and objects from the source (the watch
cache's view over the caller's own LISTs, lists/cachesource.py), runs ``query.reads.Need``s
concurrently into a ``Related`` and keeps the response's non-critical ``errors``: a forbidden
related read becomes an ``{"ErrStatus": ...}`` entry and is remembered in ``refused``; the main
read's 403 fails the request with 403. A handler that made a Fetch (``Pipeline.fetch``) calls
``Fetch.close`` when its request ends (the list slots it holds are given back).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Iterable

from dashboard_api.kinds import table as kinds
from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists.access import Budget
from dashboard_api.lists.passthrough import Lease
from dashboard_api.query.page import Rows
from dashboard_api.query.reads import ALL, Namespaces, Need
from dashboard_api.serving.errors import ApiError, is_forbidden
from dashboard_api.summaries.related import Related

# "All namespaces" for a caller who may not list cluster-wide: at most this many namespaces are
# checked one by one (the settings' namespaceFallbackList first).
MAX_CANDIDATE_NAMESPACES = 256


class Fetch:
    """One request's reads, with its caller's handle, and the errors it collected."""

    def __init__(self, handle: Any, cluster: Any, source: Any):
        self.handle = handle
        self.cluster = cluster
        self.source = source
        self.errors = []
        self.refused = {}    # Need.key -> the 403 of a related read (read as empty)
        self.lease = Lease()
        self.reviews = None  # the request's review budget (lists/access.py), made when needed
        # What decorators' versions promised the page (lists/pipeline.py), by decorator; one
        # whose addition could not follow it sets ``unversioned``: the answer then leaves
        # without its validator.
        self.promised = {}
        self.unversioned = False
        # (resource, namespaces) of each read the watch cache answered, the caller authorized
        # (lists/cachesource.py): what a page's validator was allowed on.
        self.authorized = []

    def close(self) -> None:
        """The request has ended: its list slot, if it took one, is free again."""
        self.lease.release()

    def forbidden(self, error: ApiError) -> None:
        entry = error.as_status_error()
        if all(e["ErrStatus"]["message"] != error.message for e in self.errors):
            self.errors.append(entry)

    async def resource(self, kind: Any) -> Resource:
        if isinstance(kind, Resource):  # already resolved, e.g. from a CRD's own versions
            return kind
        return await self.cluster.discovery.resolve(self.handle, kind.group, kind.plural,
                                                    kind.versions)

    async def list(self, kind: Any, namespaces: Namespaces = ALL, labels: str | None = None,
                   fields: str | None = None) -> list[dict]:
        resource = await self.resource(kind)
        return await self.source.list(self, resource, namespaces, labels, fields)

    async def rows(self, kind: Any, namespaces: Namespaces) -> Rows:
        resource = await self.resource(kind)
        return await self.source.rows(self, kind, resource, namespaces)

    async def cached(self, kind: Any) -> bool:
        """Whether the source answers lists of ``kind`` from the watch cache."""
        return self.source.cached(await self.resource(kind))

    async def get(self, kind: Any, namespace: str | None, name: str) -> dict:
        resource = await self.resource(kind)
        return await self.source.get(self, resource, namespace, name)

    async def authorize_beside(self, needs: Iterable[Need]) -> None:
        """Starts now the reviews the source will make before the list reads ``needs`` (a
        page's related reads), without waiting for them: they run beside the main read's own
        review, so a page whose answers are not known (a caller's first, or one after they
        expired) waits for one round of reviews, not two in a row. Only discovery is awaited
        (remembered: nothing waits in the common case, every answer known); what goes wrong is
        met by the reads themselves."""
        beside = getattr(self.source, "authorize_beside", None)
        if beside is None:
            return
        for need in needs:
            if need.name is not None:
                continue
            try:
                resource = await self.resource(self._kind_of(need))
            except ApiError:
                continue
            beside(self, resource, need.namespaces)

    async def usable_namespaces(self, kind: Any, verb: str = "list",
                                by_name: bool = False) -> list[str]:
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

    @staticmethod
    def _kind_of(need):
        return kinds.get(need.kind) if isinstance(need.kind, str) else need.kind

    async def _at_once(self, need):
        """Whether ``need`` is a list the cache answers with nothing to wait for (a kind not
        served: no, _read says what then)."""
        if need.name is not None:
            return False
        try:
            resource = await self.resource(self._kind_of(need))
        except ApiError:
            return False
        return self.source.answers_at_once(self, resource, need.namespaces)

    async def _read(self, need):
        kind = self._kind_of(need)
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

    async def gather(self, needs: Iterable[Need], rel: Related) -> Related:
        """Carries out the needs whose key ``rel`` lacks into ``rel``: the lists the cache
        answers at once one after the other, in line (no task, so no step of the event loop to
        wait for behind the other requests' work), the others (a LIST, a review, a first sync
        to wait for) concurrently."""
        todo = {}
        for need in needs:
            if need.key not in rel and need.key not in todo:
                todo[need.key] = need
        if not todo:
            return rel
        asked = {}
        for key, need in todo.items():
            if await self._at_once(need):
                rel[key] = await self._read(need)
            else:
                asked[key] = need
        if asked:
            results = await asyncio.gather(*(self._read(n) for n in asked.values()))
            for key, result in zip(asked, results):
                rel[key] = result
        return rel

    async def settle(self, needs_of: Callable[[Related], Iterable[Need]], rel: Related,
                     rounds: int = 3) -> Related:
        """Gathers ``needs_of(rel)`` until it asks for nothing new (needs that depend on
        earlier results, e.g. a pod's controller and then the controller's pods)."""
        for _ in range(rounds):
            needs = [n for n in needs_of(rel) if n.key not in rel]
            if not needs:
                return rel
            await self.gather(needs, rel)
        return rel
