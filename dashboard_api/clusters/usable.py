"""Whether the signed-in person can use each cluster, for ``GET /api/v1/clusters`` (issue #39).

Only for a person signed in with the provider, whose ID token the gateway verified: that token
is the whole gateway's session, meant for every cluster. Each cluster is asked with a
SelfSubjectAccessReview made as that person would make their requests there (the token as it
is in ``forward`` mode; the cluster's own credentials impersonating them in ``impersonate``
mode): a 201 says the cluster knows them (``true``), a 401 or 403 that it does not (an API
server that does not trust the provider; a gateway account without the right to impersonate:
``false``); no answer within ``DEADLINE`` seconds, ``null``. A token of any other kind is
never sent to another cluster: only its own cluster says ``true`` (the request got there).

The answers are kept ``TTL`` seconds per token digest and cluster (at most ``MAX_ANSWERS``), so
that asking for the list again and again asks each cluster once a minute; the questions run
in each cluster's own executor, side by side, so that a hung cluster costs the list at most
``DEADLINE``.
"""

import asyncio
import hashlib
import time

import cachetools

from dashboard_api.kubeapi.client import SELF_REVIEWS
from dashboard_api.serving.errors import ApiError

DEADLINE = 3.0
TTL = 60.0
MAX_ANSWERS = 10000
REVIEW = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
          "spec": {"nonResourceAttributes": {"verb": "get", "path": "/version"}}}


class Usability:
    def __init__(self, ttl=TTL, size=MAX_ANSWERS, clock=time.monotonic):
        self._answers = cachetools.TTLCache(size, ttl, timer=clock)

    async def of(self, clusters, token, person):
        """{cluster name: True, False or None} for ``person`` (auth.persons.Person) signed
        in with ``token``."""
        digest = hashlib.sha256(token.encode("utf-8")).digest()
        clusters = list(clusters)
        answers = await asyncio.gather(*(self._one(c, digest, token, person) for c in clusters))
        return {c.name: answer for c, answer in zip(clusters, answers)}

    async def _one(self, cluster, digest, token, person):
        key = (digest, cluster.name, cluster.fingerprint, cluster.auth_mode)
        if key in self._answers:
            return self._answers[key]
        try:
            handle = cluster.api.impersonating(person.impersonation(), token) \
                if cluster.impersonates else cluster.api.handle(token)
            response = await handle.call("POST", SELF_REVIEWS, body=REVIEW, timeout=DEADLINE)
        except ApiError:   # unreachable, no answer in time: not known
            return None
        answer = True if response.status in (200, 201) else \
            False if response.status in (401, 403) else None
        if answer is not None:
            self._answers[key] = answer
        return answer
