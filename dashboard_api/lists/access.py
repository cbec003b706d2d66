"""May this caller list that resource there? Asked of the API server with the caller's token.

Before the cache answers, the caller's right to ``list`` the resource in each namespace asked
(cluster-wide for all namespaces) is checked with a SelfSubjectAccessReview made with their own
token and impersonation headers. Answers are kept per (token hash, verb, resource, namespace)
for ``ttl`` seconds (``--access-cache-ttl``), and then, up to ``max_age``
(``--access-cache-max-age``), for as long as the watch cache vouches that none of the objects
that decide it has changed since (``vouch``, lists/rbacstamp.py: roles, bindings, service
accounts; a token's own ``exp`` ends it too). A right taken back through RBAC therefore ends
as soon as the watch delivers the change (within ``ttl`` of it at most); what the watch cannot
see (a token's secret deleted, the pod a token is bound to gone, an authorizer other than RBAC)
within ``max_age``. The web UI refreshes every 5 s: with the TTL alone, each refresh asked the
API server again (issue #40). At most ``size`` answers are kept (least recently used go first;
expired ones are dropped as they are met), so a stream of new tokens cannot grow the process.
An invalid token fails the review itself with 401. A denial is turned into the API server's
own 403 by making the caller's real LIST (limit 1), so the message names the user exactly as
the API server does.

The reviews one caller can cause are bounded (a low-rights caller asking for "all namespaces"
makes one review per candidate namespace and kind): at most ``PER_CALLER_CONCURRENCY`` of a
caller's reviews are in flight at once, whatever the number of their requests, and one request
makes at most ``Budget.limit`` reviews in all (``MAX_REVIEWS_PER_REQUEST``; answers already
known cost nothing): the namespaces beyond it are left out of that answer as if refused.
Answers, negative ones included, are remembered for ``ttl`` seconds, so the next request of the
same caller asks nothing again. An answer still used once it is older than AHEAD of ``ttl`` is
asked again in the background (``_ask_ahead``): a caller who keeps asking never waits for the
review of an expired answer (a search's 36 kinds every ``ttl`` took up to 2.6 s beside a heavy
load), while no answer serves longer than ``ttl``.

A search (lists/search.py) asks where a caller refused cluster-wide may list each of many kinds:
one SelfSubjectRulesReview per candidate namespace (``rules``, remembered as the reviews are,
at most ``RULES_ENTRIES`` of them) says it for every kind at once, instead of a review per kind
and namespace; the namespaces it names are then reviewed per kind as a list's are, and where its
answer is incomplete (an authorizer that cannot list its rules) the review alone decides.

While the API server does not answer (a review fails as unreachable: 502, 503, 504), a caller
it has already answered keeps the last answer it gave, for up to ``memory`` seconds from that
answer (``--access-outage-memory``; RBAC cannot change while the API server is away; at most
``size`` answers, the least recently used going first), and a refusal it gave keeps its 403.
Meanwhile no review waits on the API server: one at a time is sent to find out whether it is
back (the first the outage meets, then one every ``ttl``), the others are answered from memory
at once. A token never answered (or answered longer ago than ``memory``) gets a 503 saying the
cluster is unreachable, and a JWT past its ``exp`` is refused with a 401: the API server would
refuse it, and cannot be asked.
"""

import asyncio
import datetime
import time
from typing import Any, NamedTuple

import cachetools

from dashboard_api.kubeapi.client import Handle
from dashboard_api.kubeapi.identity import identity_key
from dashboard_api.serving.bearer import expiry
from dashboard_api.serving.errors import ApiError, is_forbidden
from dashboard_api.serving.singleflight import SingleFlight

MAX_ENTRIES = 50000
PER_CALLER_CONCURRENCY = 8
MAX_REVIEWS_PER_REQUEST = 128
# Rules reviews kept (each a few KB for a caller with many roles): by far fewer than answers.
RULES_ENTRIES = 2048
OUTAGE_MEMORY = 3600.0   # seconds an answer may serve while the API server does not answer
UNREACHABLE = (502, 503, 504)
# The part of the ttl after which a remembered answer still used is asked again ahead.
AHEAD = 0.8


class Answer(NamedTuple):
    """What the API server answered for one key, and what it rests on."""
    allowed: bool
    at: float        # when (clock) the review was answered
    stamp: Any       # the watched RBAC's stamp settled before it was asked (None: ttl only)
    exp: Any         # the token's exp claim (a JWT's), or None


def _quiet(task):
    """A review asked ahead: its error is met by the next request that needs the answer."""
    if not task.cancelled():
        task.exception()


def _attributes(key):
    """The SelfSubjectAccessReview attributes of an answer's key (``Access.allowed``)."""
    _identity, verb, group, plural, namespace, name, subresource = key
    attributes = {"verb": verb, "group": group, "resource": plural}
    if namespace:
        attributes["namespace"] = namespace
    if name:
        attributes["name"] = name
    if subresource:
        attributes["subresource"] = subresource
    return attributes


def unreachable(error):
    """Whether an error says the API server did not answer (refused, reset, hung, or said it
    is unavailable)."""
    return isinstance(error, ApiError) and error.code in UNREACHABLE and \
        not isinstance(error, Unreachable)


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
    def __init__(self, ttl=5.0, clock=time.monotonic, size=MAX_ENTRIES, memory=OUTAGE_MEMORY,
                 wall=time.time, vouch=None, max_age=0.0):
        self.ttl = ttl
        self.size = size
        self.memory = memory
        self.clock = clock
        self.wall = wall
        # lists/rbacstamp.py's RbacStamp, or None: answers last ``ttl`` only.
        self.vouch = vouch if vouch is not None and max_age > ttl else None
        self.max_age = max_age if self.vouch is not None else ttl
        # key -> Answer, for at most max_age seconds from the answer (``_fresh`` says how
        # long each serves); the least recently used go first.
        self._answers = cachetools.TTLCache(size, self.max_age, timer=clock)
        self._rules = cachetools.TTLCache(RULES_ENTRIES, ttl, timer=clock)  # key -> Rules
        # What the API server last said, for its outages: key -> (allowed, clock of the
        # answer); (identity, group, plural, namespace) -> its 403; identity -> clock of its
        # last answer (whatever the memory: the credentials the API server has answered).
        self._last = cachetools.LRUCache(size)
        self._refusals = cachetools.LRUCache(size)
        self._seen = cachetools.LRUCache(size)
        self._away = False        # a review found the API server away, none answered since
        self._next_probe = None   # (clock) the next review to find out whether it is back
        self._probe = None        # that review, while under way
        self._asking = SingleFlight()   # one review per key at a time
        self._slots = {}  # identity -> [semaphore, reviews waiting or running]
        self.hits = 0
        self.misses = 0
        self.over_budget = 0
        self.remembered = 0   # answers given from memory while the API server was away
        self.ahead = 0        # answers asked again ahead of their expiry
        self.vouched = 0      # answers used past ``ttl``, the watched RBAC unchanged

    @staticmethod
    def identity(handle):
        if isinstance(handle, Handle):
            return handle.identity
        return identity_key(handle.token or "", handle.impersonation)

    async def allowed(self, handle, verb, resource, namespace="", name=None, budget=None,
                      subresource=None):
        """Whether the caller may; with a `budget` (Budget) exhausted, False without asking."""
        identity = self.identity(handle)
        key = (identity, verb, resource.group, resource.plural, namespace, name, subresource)
        found = self._fresh(self._answers.get(key), count=True)
        if found is not None:
            self.hits += 1
            self._ask_ahead(identity, handle, key, found, budget)
            return found.allowed
        attributes = _attributes(key)
        if self.away():
            self._probe_with(identity, handle, attributes, key)
            return self._remembered(key, handle)
        if key in self._asking:
            self.hits += 1
        elif budget is not None and not budget.spend():
            self.over_budget += 1
            return False
        else:
            self.misses += 1
        return await self._asking.run(key, self._review(identity, handle, attributes, key))

    def _fresh(self, found, count=False):
        """``found`` (an Answer or None) if it may serve now, else None: for ``ttl`` seconds
        from the API server's answer; then, up to ``max_age``, while the stamp of the watched
        RBAC (lists/rbacstamp.py) is still the one settled before the review was asked, and
        the token's own ``exp`` (a JWT's) has not passed. ``count``: a use past ``ttl`` counts
        in ``vouched``."""
        if found is None or self.clock() - found.at < self.ttl:
            return found
        if found.stamp is None or found.stamp != self.vouch.current() or \
                (found.exp is not None and found.exp <= self.wall()):
            return None
        if count:
            self.vouched += 1
        return found

    def _review(self, identity, handle, attributes, key):
        async def review():
            stamp = self.vouch.settled() if self.vouch is not None else None
            try:
                answer = await self._limited(identity, lambda: handle.can_i(**attributes))
            except ApiError as exc:
                if not unreachable(exc) or self.memory <= 0:
                    raise
                self._went_away()
                return self._remembered(key, handle, exc)
            self._keep(key, answer, stamp, expiry(handle.token) if stamp is not None else None)
            return answer
        return review

    def _ask_ahead(self, identity, handle, key, found, budget):
        """A remembered answer still used once it is older than AHEAD of the time it may serve
        (``ttl``, or ``max_age`` while the watched RBAC vouches for it) is asked again in the
        background, so that a caller who keeps asking finds it fresh rather than waiting for
        the review once it expires (a search's 36 kinds every ``ttl``: issue #38). No answer
        serves longer than ``_fresh`` allows either way; the review counts in the request's
        ``budget``."""
        age = self.clock() - found.at
        lifetime = self.ttl if age < self.ttl * AHEAD or found.stamp is None or \
            found.stamp != self.vouch.current() else self.max_age
        if age < lifetime * AHEAD or key in self._asking or self.away():
            return
        if budget is not None and not budget.spend():
            return
        self.ahead += 1
        task = asyncio.ensure_future(self._asking.run(
            key, self._review(identity, handle, _attributes(key), key)))
        task.add_done_callback(_quiet)

    def warm(self, handle, verb, resource, namespace=""):
        """Starts the review ``allowed`` would make, without waiting for it, when its answer
        is not known now nor being asked: for a read the request makes a moment later, so that
        its review runs beside the request's first one rather than after it (lists/fetch.py
        ``authorize_beside``). That read meets its answer, or its error.

        Only for credentials the API server has answered before (``_seen``): a token nobody
        has vouched for (a stranger's, a flood of bad ones) costs the API server one review a
        request, as before, never one for each related read besides."""
        identity = self.identity(handle)
        key = (identity, verb, resource.group, resource.plural, namespace, None, None)
        if identity not in self._seen or key in self._asking or \
                self._fresh(self._answers.get(key)) is not None or self.away():
            return
        task = asyncio.ensure_future(self.allowed(handle, verb, resource, namespace))
        task.add_done_callback(_quiet)

    def known(self, handle, verb, resource, namespace="", name=None, subresource=None):
        """The remembered answer of ``allowed`` (True or False), or None when it must be
        asked: nothing is asked here."""
        return self.known_for(self.identity(handle), verb, resource, namespace, name,
                              subresource)

    def known_for(self, identity, verb, resource, namespace="", name=None, subresource=None):
        """``known`` for the credentials of ``identity`` (``Access.identity``): what a page's
        validator keeps to prove itself again, without holding a request's handle."""
        found = self._fresh(self._answers.get((identity, verb, resource.group, resource.plural,
                                               namespace, name, subresource)))
        return None if found is None else found.allowed

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

    # --- the API server away ---------------------------------------------------------------

    def away(self):
        """Whether reviews are answered from memory now: a review found the API server away,
        and none has been answered since."""
        return self._away

    def knows(self, token, impersonation=()):
        """Whether the API server has answered a review of these credentials (within the
        outage memory): who may be told that it is away (handlers/system.py)."""
        when = self._seen.get(identity_key(token or "", tuple(impersonation)))
        return self.memory > 0 and when is not None and self.clock() - when <= self.memory

    def _keep(self, key, answer, stamp=None, exp=None):
        now = self.clock()
        self._answers[key] = Answer(answer, now, stamp, exp)
        self._seen[key[0]] = now   # these credentials are the API server's (``knows``, ``warm``)
        if self.memory > 0:
            self._last[key] = (answer, now)
        self._away = False

    def _went_away(self):
        self._away = True
        self._next_probe = self.clock() + max(self.ttl, 1.0)

    def _probe_with(self, identity, handle, attributes, key):
        """While the API server is away: one review at a time, at most one every ``ttl``
        seconds; any answer of the API server's ends the outage."""
        if self._probe is not None and not self._probe.done():
            return
        if self._next_probe is not None and self.clock() < self._next_probe:
            return
        self._next_probe = self.clock() + max(self.ttl, 1.0)

        async def probe():
            try:
                answer = await self._limited(identity, lambda: handle.can_i(**attributes))
            except ApiError as exc:
                if unreachable(exc):
                    self._went_away()
                else:   # it answered (if only to refuse this token): it is back
                    self._away = False
                return
            self._keep(key, answer)
        self._probe = asyncio.ensure_future(probe())

    def _remembered(self, key, handle, cause=None):
        """The last answer for ``key`` while the API server is away, or the error to give."""
        found = self._last.get(key)
        reason = cause.message if cause is not None else "it did not answer just before"
        if found is None or self.clock() - found[1] > self.memory:
            raise Unreachable(reason, seen=found is not None)
        exp = expiry(handle.token)
        if exp is not None and exp <= self.wall():
            raise ApiError(401, "the token expired at %s, and the cluster's API server, which "
                           "would renew nothing, does not answer now" % _stamp(exp),
                           "Unauthorized")
        self.remembered += 1
        return found[0]

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

    async def refusal(self, handle, resource, namespace):
        """The caller's own LIST (one object) gives the API server's 403 and message. Should
        the API server allow it after all, the cache is not used for this request. While the
        API server is away, the 403 it gave last."""
        key = (self.identity(handle), resource.group, resource.plural, namespace)
        if not self.away():
            try:
                await handle.get(resource.path(namespace or None), {"limit": 1})
            except ApiError as exc:
                if is_forbidden(exc):
                    self._refusals[key] = exc
                if not unreachable(exc):
                    raise
            else:
                raise Disagreement()
        refused = self._refusals.get(key)
        if refused is not None:
            raise refused
        raise ApiError(403, "the API server said this caller may not list %s%s when it last "
                       "answered; it does not answer now" % (
                           resource.plural, " in namespace %s" % namespace if namespace else ""),
                       "Forbidden")


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


class Unreachable(ApiError):
    """The API server does not answer, and it has not answered for these credentials before
    (or longer ago than the outage memory): nothing can be shown to them until it does."""

    def __init__(self, reason, seen=False):
        super().__init__(503, "the cluster is unreachable (%s), and %s, so nothing can be "
                         "shown until it answers again" % (
                             reason, "it last checked these credentials too long ago" if seen
                             else "it has not checked these credentials before"),
                         "ServiceUnavailable")


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


class Disagreement(ApiError):
    """The review said no but the LIST went through: answer this request from the API server."""

    def __init__(self):
        super().__init__(500, "authorization answers disagree")
