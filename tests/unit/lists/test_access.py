"""What a SelfSubjectRulesReview says a caller may list (lists/access.py Rules), and the rules
remembered per caller and namespace like the access answers."""

import asyncio

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
