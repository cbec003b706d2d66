"""May this caller list that resource there? Asked of the API server with the caller's token.

Before the cache answers, the caller's right to ``list`` the resource in each namespace asked
(cluster-wide for all namespaces) is checked with a SelfSubjectAccessReview made with their own
token and impersonation headers. Answers are kept per (token hash, verb, resource, namespace)
for ``ttl`` seconds: that is the only delay before a revoked right takes effect. At most
``size`` answers are kept (least recently used go first; expired ones are dropped as they are
met), so a stream of new tokens cannot grow the process. An invalid token
fails the review itself with 401. A denial is turned into the API server's own 403 by making the
caller's real LIST (limit 1), so the message names the user exactly as the API server does.

The reviews one caller can cause are bounded (a low-rights caller asking for "all namespaces"
makes one review per candidate namespace and kind): at most ``PER_CALLER_CONCURRENCY`` of a
caller's reviews are in flight at once, whatever the number of their requests, and one request
makes at most ``Budget.limit`` reviews in all (``MAX_REVIEWS_PER_REQUEST``; answers already
known cost nothing): the namespaces beyond it are left out of that answer as if refused.
Answers, negative ones included, are remembered for ``ttl`` seconds, so the next request of the
same caller asks nothing again.

A search (lists/search.py) asks where a caller refused cluster-wide may list each of many kinds:
one SelfSubjectRulesReview per candidate namespace (``rules``, remembered as the reviews are,
at most ``RULES_ENTRIES`` of them) says it for every kind at once, instead of a review per kind
and namespace; the namespaces it names are then reviewed per kind as a list's are, and where its
answer is incomplete (an authorizer that cannot list its rules) the review alone decides.
"""

import asyncio
import time

import cachetools

from dashboard_api.kubeapi.handlecache import cache_key
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.singleflight import SingleFlight

MAX_ENTRIES = 50000
PER_CALLER_CONCURRENCY = 8
MAX_REVIEWS_PER_REQUEST = 128
# Rules reviews kept (each a few KB for a caller with many roles): by far fewer than answers.
RULES_ENTRIES = 2048


class Budget:
    """How many reviews one request may still make."""

    def __init__(self, limit=MAX_REVIEWS_PER_REQUEST):
        self.limit = limit
        self.left = limit

    def spend(self):
        if self.left <= 0:
            return False
        self.left -= 1
        return True


class Access:
    def __init__(self, ttl=5.0, clock=time.monotonic, size=MAX_ENTRIES):
        self.ttl = ttl
        self.size = size
        # key -> allowed, for ttl seconds from the answer; the least recently used go first.
        self._answers = cachetools.TTLCache(size, ttl, timer=clock)
        self._rules = cachetools.TTLCache(RULES_ENTRIES, ttl, timer=clock)  # key -> Rules
        self._asking = SingleFlight()   # one review per key at a time
        self._slots = {}  # identity -> [semaphore, reviews waiting or running]
        self.hits = 0
        self.misses = 0
        self.over_budget = 0

    @staticmethod
    def identity(handle):
        return cache_key(handle.token or "", handle.impersonation)

    async def allowed(self, handle, verb, resource, namespace="", name=None, budget=None,
                      subresource=None):
        """Whether the caller may; with a `budget` (Budget) exhausted, False without asking."""
        identity = self.identity(handle)
        key = (identity, verb, resource.group, resource.plural, namespace, name, subresource)
        found = self._answers.get(key)
        if found is not None:
            self.hits += 1
            return found
        if key in self._asking:
            self.hits += 1
        elif budget is not None and not budget.spend():
            self.over_budget += 1
            return False
        else:
            self.misses += 1
        attributes = {"verb": verb, "group": resource.group, "resource": resource.plural}
        if namespace:
            attributes["namespace"] = namespace
        if name:
            attributes["name"] = name
        if subresource:
            attributes["subresource"] = subresource

        async def review():
            answer = await self._limited(identity, lambda: handle.can_i(**attributes))
            self._answers[key] = answer
            return answer
        return await self._asking.run(key, review)

    def known(self, handle, verb, resource, namespace="", name=None, subresource=None):
        """The remembered answer of ``allowed`` (True or False), or None when it must be
        asked: nothing is asked here."""
        return self._answers.get((self.identity(handle), verb, resource.group, resource.plural,
                                  namespace, name, subresource))

    async def rules(self, handle, namespace, budget=None):
        """The caller's ``Rules`` in ``namespace`` (a SelfSubjectRulesReview), remembered for
        ``ttl`` seconds; None when the ``budget`` is spent."""
        identity = self.identity(handle)
        key = (identity, "rules", namespace)
        found = self._rules.get(key)
        if found is not None:
            self.hits += 1
            return found
        if key in self._asking:
            self.hits += 1
        elif budget is not None and not budget.spend():
            self.over_budget += 1
            return None
        else:
            self.misses += 1

        async def review():
            answer = Rules(await self._limited(identity, lambda: handle.rules(namespace)))
            self._rules[key] = answer
            return answer
        return await self._asking.run(key, review)

    async def _limited(self, identity, ask):
        """``ask()`` among at most PER_CALLER_CONCURRENCY reviews of the caller in flight."""
        slot = self._slots.get(identity)
        if slot is None:
            slot = self._slots[identity] = [asyncio.Semaphore(PER_CALLER_CONCURRENCY), 0]
        slot[1] += 1
        try:
            async with slot[0]:
                return await ask()
        finally:
            slot[1] -= 1
            if slot[1] == 0:
                del self._slots[identity]

    async def require_list(self, handle, resource, namespaces):
        """Returns when the caller may list ``resource`` in every namespace of ``namespaces``
        (a tuple; empty: cluster-wide); else raises the API server's own error."""
        scopes = namespaces or ("",)
        if len(scopes) == 1:   # one answer, most often remembered: no task to wait for
            answers = [await self.allowed(handle, "list", resource, scopes[0])]
        else:
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


class Rules:
    """What a SelfSubjectRulesReview says a caller may list in one namespace: the (group,
    resource) pairs of its rules that grant ``list`` ("*" as the API server reads it), rules
    limited to named objects left out (they never allow a list)."""

    __slots__ = ("lists", "incomplete")

    def __init__(self, status):
        self.lists = frozenset(
            (group, resource)
            for rule in status.get("resourceRules") or ()
            if not rule.get("resourceNames") and {"list", "*"} & set(rule.get("verbs") or ())
            for group in rule.get("apiGroups") or () for resource in rule.get("resources") or ())
        self.incomplete = bool(status.get("incomplete"))

    def may_list(self, group, plural):
        """True when a rule grants it; False when none does; None when the rules are
        incomplete and none does (a SelfSubjectAccessReview decides)."""
        lists = self.lists
        if (group, plural) in lists or (group, "*") in lists or ("*", plural) in lists or \
                ("*", "*") in lists:
            return True
        return None if self.incomplete else False


class Disagreement(ApiError):
    """The review said no but the LIST went through: answer this request from the API server."""

    def __init__(self):
        super().__init__(500, "authorization answers disagree")
