"""What a SelfSubjectRulesReview says a caller may list (lists/access.py Rules), and the rules
remembered per caller and namespace like the access answers."""

import asyncio
import base64

from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists.access import Access, Budget, Rules

EDIT = {"resourceRules": [
    {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods", "configmaps"]},
    {"verbs": ["*"], "apiGroups": ["apps"], "resources": ["deployments"]},
    {"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["one"]},
    {"verbs": ["create"], "apiGroups": ["batch"], "resources": ["jobs"]},
], "incomplete": False}


def test_rules_grant_list_as_the_api_server_reads_them():
    rules = Rules(EDIT)
    assert rules.may_list("", "pods") and rules.may_list("apps", "deployments")
    assert rules.may_list("", "secrets") is False      # named objects only: never a list
    assert rules.may_list("batch", "jobs") is False
    assert rules.may_list("apps", "pods") is False
    everything = Rules({"resourceRules": [{"verbs": ["list"], "apiGroups": ["*"],
                                           "resources": ["*"]}]})
    assert everything.may_list("storage.k8s.io", "csidrivers")
    unsure = Rules({"resourceRules": EDIT["resourceRules"], "incomplete": True})
    assert unsure.may_list("", "pods") is True and unsure.may_list("batch", "jobs") is None
    assert Rules({}).may_list("", "pods") is False


class _Handle:
    token = "t"
    impersonation = None

    def __init__(self):
        self.asked = []

    async def rules(self, namespace):
        self.asked.append(namespace)
        return EDIT


def test_rules_are_remembered_per_caller_and_namespace_and_bounded_by_the_budget():
    access, handle = Access(), _Handle()

    async def scenario():
        first = await asyncio.gather(*(access.rules(handle, "a") for _ in range(3)))
        again = await access.rules(handle, "a")
        budget = Budget(1)
        other = await access.rules(handle, "b", budget=budget)
        refused = await access.rules(handle, "c", budget=budget)
        return first, again, other, refused
    first, again, other, refused = asyncio.run(scenario())
    assert handle.asked == ["a", "b"]
    assert all(r is first[0] for r in first) and again is first[0]
    assert other.may_list("", "pods") and refused is None


class _Reviewer(_Handle):
    async def can_i(self, **attributes):
        self.asked.append(attributes)
        return attributes.get("namespace") != "no"


def test_known_is_the_remembered_answer_and_asks_nothing():
    access, handle = Access(), _Reviewer()
    pods = Resource("", "v1", "pods", "Pod", True, ())
    assert access.known(handle, "list", pods, "a") is None
    assert asyncio.run(access.allowed(handle, "list", pods, "a")) is True
    assert asyncio.run(access.allowed(handle, "list", pods, "no")) is False
    asked = len(handle.asked)
    assert access.known(handle, "list", pods, "a") is True
    assert access.known(handle, "list", pods, "no") is False
    assert access.known(handle, "list", pods, "b") is None and len(handle.asked) == asked


class _Changing(_Handle):
    """A caller whose right the API server takes back after the first review."""

    def __init__(self):
        super().__init__()
        self.allowed = True

    async def can_i(self, **attributes):
        self.asked.append(attributes)
        return self.allowed


def test_an_answer_still_used_is_asked_again_ahead_and_none_serves_past_the_ttl():
    now = [0.0]
    access, handle = Access(ttl=5.0, clock=lambda: now[0]), _Changing()
    pods = Resource("", "v1", "pods", "Pod", True, ())

    async def scenario():
        assert await access.allowed(handle, "list", pods, "a") is True
        now[0] = 3.0          # young: used as it is, nothing asked
        assert await access.allowed(handle, "list", pods, "a") is True
        await asyncio.sleep(0)
        assert len(handle.asked) == 1
        handle.allowed = False
        now[0] = 4.5          # past AHEAD of the ttl: used, and asked again behind it
        assert await access.allowed(handle, "list", pods, "a") is True
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(handle.asked) == 2
        now[0] = 6.0          # the first answer would have expired: the new one serves
        assert access.known(handle, "list", pods, "a") is False
        assert await access.allowed(handle, "list", pods, "a") is False
        assert len(handle.asked) == 2
        now[0] = 4.5 + 5.0 + 0.1   # and expires in its turn: asked on the request's path
        assert await access.allowed(handle, "list", pods, "a") is False
        assert len(handle.asked) == 3
    asyncio.run(scenario())
    assert access.ahead == 1


def test_answers_asked_ahead_count_in_the_request_budget():
    now = [0.0]
    access, handle = Access(ttl=5.0, clock=lambda: now[0]), _Changing()
    resources = [Resource("", "v1", "r%d" % n, "R", True, ()) for n in range(4)]

    async def scenario():
        for r in resources:
            await access.allowed(handle, "list", r, "a")
        now[0] = 4.5
        budget = Budget(2)
        for r in resources:
            assert await access.allowed(handle, "list", r, "a", budget=budget) is True
        for _ in range(5):
            await asyncio.sleep(0)
    asyncio.run(scenario())
    assert len(handle.asked) == 4 + 2 and access.ahead == 2


class _Stamp:
    """A stand-in for lists/rbacstamp.py's RbacStamp: what the watched RBAC says now."""

    def __init__(self):
        self.now, self.settle = ("rbac", 1), True

    def current(self):
        return self.now

    def settled(self):
        return self.now if self.settle else None


def test_an_answer_serves_past_the_ttl_only_while_the_watched_rbac_vouches_for_it():
    now = [0.0]
    stamp = _Stamp()
    access, handle = Access(ttl=5.0, clock=lambda: now[0], vouch=stamp, max_age=30.0), \
        _Changing()
    pods = Resource("", "v1", "pods", "Pod", True, ())

    async def scenario():
        assert await access.allowed(handle, "list", pods, "a") is True
        handle.allowed = False
        now[0] = 10.0     # past the ttl, the RBAC unchanged: the answer serves, nothing asked
        assert await access.allowed(handle, "list", pods, "a") is True
        assert access.known(handle, "list", pods, "a") is True
        await asyncio.sleep(0)
        assert len(handle.asked) == 1 and access.vouched == 1
        stamp.now = ("rbac", 2)   # a role or binding changed: asked again on the request's path
        assert access.known(handle, "list", pods, "a") is None
        assert await access.allowed(handle, "list", pods, "a") is False
        assert len(handle.asked) == 2
    asyncio.run(scenario())


def test_an_answer_asked_under_an_unsettled_stamp_lasts_the_ttl_only():
    now = [0.0]
    stamp = _Stamp()
    stamp.settle = False      # the RBAC just changed: the API server may not know it yet
    access, handle = Access(ttl=5.0, clock=lambda: now[0], vouch=stamp, max_age=30.0), \
        _Changing()
    pods = Resource("", "v1", "pods", "Pod", True, ())

    async def scenario():
        assert await access.allowed(handle, "list", pods, "a") is True
        stamp.settle = True
        now[0] = 6.0
        assert access.known(handle, "list", pods, "a") is None
        assert await access.allowed(handle, "list", pods, "a") is True
        assert len(handle.asked) == 2
    asyncio.run(scenario())


def test_a_vouched_answer_ends_at_the_max_age_and_at_its_tokens_expiry():
    now, wall = [0.0], [1000.0]
    stamp = _Stamp()
    access = Access(ttl=5.0, clock=lambda: now[0], wall=lambda: wall[0], vouch=stamp,
                    max_age=30.0)
    pods = Resource("", "v1", "pods", "Pod", True, ())
    plain, expiring = _Changing(), _Changing()
    expiring.token = "e30." + base64.urlsafe_b64encode(b'{"exp": 1020}').decode().rstrip("=") \
        + ".sig"

    async def scenario():
        await access.allowed(plain, "list", pods, "a")
        await access.allowed(expiring, "list", pods, "a")
        now[0], wall[0] = 15.0, 1015.0
        assert access.known(plain, "list", pods, "a") is True
        assert access.known(expiring, "list", pods, "a") is True
        now[0], wall[0] = 21.0, 1021.0    # past the JWT's exp: not vouched for any more
        assert access.known(expiring, "list", pods, "a") is None
        assert access.known(plain, "list", pods, "a") is True
        now[0] = 30.5                     # past the max age: gone whatever the RBAC
        assert access.known(plain, "list", pods, "a") is None
    asyncio.run(scenario())


def test_a_vouched_answer_is_asked_again_ahead_of_its_max_age_not_of_its_ttl():
    now = [0.0]
    access, handle = Access(ttl=5.0, clock=lambda: now[0], vouch=_Stamp(), max_age=30.0), \
        _Changing()
    pods = Resource("", "v1", "pods", "Pod", True, ())

    async def scenario():
        await access.allowed(handle, "list", pods, "a")
        for moment in (4.5, 10.0, 20.0):   # past AHEAD of the ttl, not of the max age
            now[0] = moment
            await access.allowed(handle, "list", pods, "a")
            await asyncio.sleep(0)
        assert len(handle.asked) == 1 and access.ahead == 0
        now[0] = 25.0                      # past AHEAD of the max age: asked behind the use
        assert await access.allowed(handle, "list", pods, "a") is True
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(handle.asked) == 2 and access.ahead == 1
    asyncio.run(scenario())


def test_without_a_stamp_answers_last_the_ttl_whatever_the_max_age():
    now = [0.0]
    access, handle = Access(ttl=5.0, clock=lambda: now[0], max_age=30.0), _Changing()
    pods = Resource("", "v1", "pods", "Pod", True, ())
    asyncio.run(access.allowed(handle, "list", pods, "a"))
    now[0] = 5.5
    assert access.known(handle, "list", pods, "a") is None and access.max_age == 5.0


class _Slow(_Handle):
    """A reviewer that answers after a while, noting how many reviews are under way at once."""

    def __init__(self):
        super().__init__()
        self.running = self.most = 0

    async def can_i(self, **attributes):
        self.asked.append(attributes)
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        return True


def test_warm_starts_the_review_a_read_will_wait_for_and_nothing_else():
    """A read's review started early (``warm``) is the one the read then joins: the page's
    reviews run together, and nothing is asked twice or when the answer is known."""
    access, handle = Access(), _Slow()
    pods = Resource("", "v1", "pods", "Pod", True, ())
    events = Resource("", "v1", "events", "Event", True, ())

    async def scenario():
        assert await access.allowed(handle, "list", pods, "a") is True   # credentials answered
        access.warm(handle, "list", events, "b")
        access.warm(handle, "list", events, "b")   # being asked: not again
        assert await access.allowed(handle, "list", pods, "b") is True   # the list's own
        assert await access.allowed(handle, "list", events, "b") is True  # joins the early one
        assert len(handle.asked) == 3 and handle.most == 2
        access.warm(handle, "list", events, "b")   # known: nothing asked
        await asyncio.sleep(0.02)
        assert len(handle.asked) == 3
    asyncio.run(scenario())
    assert access.misses == 3


def test_warm_asks_nothing_for_credentials_the_api_server_never_answered():
    """A stranger's token (a flood of bad ones) costs one review a request, as before: its
    related reads are not reviewed early, each for nothing."""
    access, handle = Access(), _Slow()
    events = Resource("", "v1", "events", "Event", True, ())

    async def scenario():
        access.warm(handle, "list", events, "a")
        await asyncio.sleep(0.02)
    asyncio.run(scenario())
    assert handle.asked == []


def test_warm_asks_nothing_while_the_api_server_is_away():
    access, handle = Access(), _Slow()
    pods = Resource("", "v1", "pods", "Pod", True, ())

    async def scenario():
        await access.allowed(handle, "list", pods, "a")
        access._away = True
        access.warm(handle, "list", pods, "b")
        await asyncio.sleep(0.02)
    asyncio.run(scenario())
    assert len(handle.asked) == 1
