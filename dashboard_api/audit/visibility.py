"""Which audit entries a reader may see: those the cluster would let them read anyway.

An entry about an object is shown to a reader who may ``list`` its kind in its namespace (a
cluster-scoped object: at cluster scope); a terminal session to one who may ``create
pods/exec`` in its namespace; an entry naming no kind the gateway could resolve (a request
refused before it named one) only to one who may list everything at cluster scope. So teams
see their own namespaces' history and administrators everything, with no new roles.

The cluster answers, with the reader's own identity (their token, or the person the gateway
impersonates), through the list road's access answers (lists/access.py: remembered for
``--access-cache-ttl``, at most ``MAX_REVIEWS_PER_REQUEST`` new reviews per request, a
caller's reviews bounded in flight). A right at cluster scope covers every namespace of that
kind, so an administrator costs one review per kind, not one per namespace.
"""

from __future__ import annotations

import asyncio

from dashboard_api.lists.access import Budget

EVERYTHING = ("*", "*")


class _Resource:
    """What lists.access.Access asks about: ``group`` and ``plural``."""

    __slots__ = ("group", "plural")

    def __init__(self, group, plural):
        self.group, self.plural = group, plural


async def allowed_scopes(access, handle, scopes, budget=None):
    """The scopes of ``scopes`` (group, resource, namespace, terminal) the reader may see, as
    (group, resource, namespace or None for every namespace, terminal)."""
    budget = budget or Budget()
    kinds = {}
    for group, resource, namespace, terminal in scopes:
        kinds.setdefault((group, resource, terminal), set()).add(namespace)

    async def check(key, namespaces):
        group, resource, terminal = key
        if terminal:
            asked = _Resource("", "pods")
            verb, sub = "create", "exec"
        elif resource:
            asked, verb, sub = _Resource(group, resource), "list", None
        else:
            asked, verb, sub = _Resource(*EVERYTHING), "list", None
        if await access.allowed(handle, verb, asked, "", budget=budget, subresource=sub):
            return [(group, resource, None, terminal)]
        if not resource and not terminal:
            return []
        named = sorted(ns for ns in namespaces if ns)
        answers = await asyncio.gather(*(
            access.allowed(handle, verb, asked, ns, budget=budget, subresource=sub)
            for ns in named))
        return [(group, resource, ns, terminal) for ns, ok in zip(named, answers) if ok]

    results = await asyncio.gather(*(check(key, namespaces)
                                     for key, namespaces in sorted(kinds.items())))
    return [scope for found in results for scope in found]
