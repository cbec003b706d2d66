"""May this caller list that resource there? Asked of the API server with the caller's token.

Before the cache answers, the caller's right to ``list`` the resource in each namespace asked
(cluster-wide for all namespaces) is checked with a SelfSubjectAccessReview made with their own
token and impersonation headers. Answers are kept per (token hash, verb, resource, namespace)
for ``ttl`` seconds: that is the only delay before a revoked right takes effect. At most
``size`` answers are kept (least recently used go first; expired ones are dropped as they are
met), so a stream of new tokens cannot grow the process. An invalid token
fails the review itself with 401. A denial is turned into the API server's own 403 by making the
caller's real LIST (limit 1), so the message names the user exactly as the API server does.
"""

import asyncio
import time

import cachetools

from dashboard_api.cluster.handlecache import cache_key
from dashboard_api.errors import ApiError

MAX_ENTRIES = 50000


class Access:
    def __init__(self, ttl=5.0, clock=time.monotonic, size=MAX_ENTRIES):
        self.ttl = ttl
        self.size = size
        self._clock = clock
        self._answers = cachetools.TTLCache(size, ttl, timer=clock)   # key -> allowed
        self._pending = {}
        self.hits = 0
        self.misses = 0

    @staticmethod
    def identity(handle):
        return cache_key(handle.token or "", handle.impersonation)

    async def allowed(self, handle, verb, resource, namespace="", name=None):
        key = (self.identity(handle), verb, resource.group, resource.plural, namespace, name)
        found = self._answers.get(key)
        if found is not None:
            self.hits += 1
            return found
        pending = self._pending.get(key)
        if pending is None:
            self.misses += 1
            attributes = {"verb": verb, "group": resource.group, "resource": resource.plural}
            if namespace:
                attributes["namespace"] = namespace
            if name:
                attributes["name"] = name
            pending = asyncio.ensure_future(handle.can_i(**attributes))
            self._pending[key] = pending
            try:
                answer = await asyncio.shield(pending)
            finally:
                self._pending.pop(key, None)
            self._remember(key, answer)
            return answer
        self.hits += 1
        return await asyncio.shield(pending)

    def _remember(self, key, answer):
        self._answers[key] = answer

    async def require_list(self, handle, resource, namespaces):
        """Returns when the caller may list ``resource`` in every namespace of ``namespaces``
        (a tuple; empty: cluster-wide); else raises the API server's own error."""
        scopes = namespaces or ("",)
        answers = await asyncio.gather(*(self.allowed(handle, "list", resource, ns)
                                         for ns in scopes))
        for ns, ok in zip(scopes, answers):
            if not ok:
                await self.refusal(handle, resource, ns)

    @staticmethod
    async def refusal(handle, resource, namespace):
        """The caller's own LIST (one object) gives the API server's 403 and message. Should
        the API server allow it after all, the cache is not used for this request."""
        await handle.get(resource.path(namespace or None), {"limit": 1})
        raise Disagreement()


class Disagreement(ApiError):
    """The review said no but the LIST went through: answer this request from the API server."""

    def __init__(self):
        super().__init__(500, "authorization answers disagree")
