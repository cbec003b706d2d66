"""May this caller list that resource there? Asked of the API server with the caller's token.

Before the cache answers, the caller's right to ``list`` the resource in each namespace asked
(cluster-wide for all namespaces) is checked with a SelfSubjectAccessReview made with their own
token and impersonation headers. Answers are kept per (token hash, verb, resource, namespace)
for ``ttl`` seconds: that is the only delay before a revoked right takes effect. An invalid token
fails the review itself with 401. A denial is turned into the API server's own 403 by making the
caller's real LIST (limit 1), so the message names the user exactly as the API server does.
"""

import asyncio
import time

import cachetools

from dashboard_api.cluster.handlecache import cache_key
from dashboard_api.errors import ApiError
from dashboard_api.singleflight import SingleFlight

MAX_ENTRIES = 50000


class Access:
    def __init__(self, ttl=5.0, clock=time.monotonic, size=MAX_ENTRIES):
        self.ttl = ttl
        self.size = size
        # key -> allowed, for ttl seconds from the answer; the least recently used go first.
        self._answers = cachetools.TTLCache(size, ttl, timer=clock)
        self._asking = SingleFlight()   # one review per key at a time
        self.hits = 0
        self.misses = 0

    @staticmethod
    def identity(handle):
        return cache_key(handle.token or "", handle.impersonation)

    async def allowed(self, handle, verb, resource, namespace="", name=None):
        key = (self.identity(handle), verb, resource.group, resource.plural, namespace, name)
        found = self._answers.get(key)
        if found is not None or key in self._asking:
            self.hits += 1
            if found is not None:
                return found
        else:
            self.misses += 1
        attributes = {"verb": verb, "group": resource.group, "resource": resource.plural}
        if namespace:
            attributes["namespace"] = namespace
        if name:
            attributes["name"] = name

        async def review():
            answer = await handle.can_i(**attributes)
            self._answers[key] = answer
            return answer
        return await self._asking.run(key, review)

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
