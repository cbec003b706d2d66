"""Which audit entries a reader may see (audit/visibility.py), with a stand-in for the list
road's access answers: a right at cluster scope covers every namespace of that kind; else each
namespace is asked; terminal sessions need create pods/exec; entries of no known kind are for
those who may list everything."""

import asyncio

from dashboard_api.audit import visibility


class Rights:
    """Answers like lists.access.Access for a reader holding ``rights``:
    {(verb, group, plural, subresource): set of namespaces, "" for cluster scope}."""

    def __init__(self, rights):
        self.rights = rights
        self.asked = []

    async def allowed(self, handle, verb, resource, namespace="", name=None, budget=None,
                      subresource=None):
        self.asked.append((verb, resource.group, resource.plural, namespace, subresource))
        return namespace in self.rights.get((verb, resource.group, resource.plural,
                                             subresource), ())


SCOPES = [("apps", "deployments", "a", False), ("apps", "deployments", "b", False),
          ("", "nodes", "", False), ("", "pods", "a", True), ("", "", "a", False)]


def test_a_team_sees_its_namespace_only():
    rights = Rights({("list", "apps", "deployments", None): {"a"},
                     ("create", "", "pods", "exec"): {"a"}})
    got = asyncio.run(visibility.allowed_scopes(rights, None, SCOPES))
    assert sorted(got, key=str) == sorted([("apps", "deployments", "a", False),
                                           ("", "pods", "a", True)], key=str)


def test_an_administrator_costs_one_question_per_kind():
    everything = {"", "a", "b"}
    rights = Rights({("list", "apps", "deployments", None): everything,
                     ("list", "", "nodes", None): everything,
                     ("create", "", "pods", "exec"): everything,
                     ("list", "*", "*", None): everything})
    got = asyncio.run(visibility.allowed_scopes(rights, None, SCOPES))
    assert sorted(got, key=str) == sorted([
        ("apps", "deployments", None, False), ("", "nodes", None, False),
        ("", "pods", None, True), ("", "", None, False)], key=str)
    assert len(rights.asked) == 4 and all(ns == "" for *_, ns, _sub in rights.asked)
