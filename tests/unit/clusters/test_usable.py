"""Whether a signed-in person can use each cluster (clusters/usable.py): a cluster's 201 to a
review made as the person would make their requests there, its 401 or 403, no answer; each
remembered a while, a cluster that did not answer asked again."""

import asyncio
import types

from dashboard_api.auth.persons import Person
from dashboard_api.clusters.usable import Usability
from dashboard_api.serving.errors import ApiError


class Api:
    def __init__(self, status):
        self.status = status
        self.asked = []

    def handle(self, token):
        return self._handle(("token", token))

    def impersonating(self, lines, key):
        return self._handle(("gateway", lines))

    def _handle(self, how):
        api = self

        class Handle:
            async def call(self, method, path, body=None, timeout=None):
                api.asked.append((how, path, timeout))
                if api.status is None:
                    raise ApiError(504, "no answer")
                return types.SimpleNamespace(status=api.status)
        return Handle()


def cluster(name, status, mode="forward"):
    return types.SimpleNamespace(name=name, fingerprint="f", auth_mode=mode,
                                 impersonates=mode == "impersonate", api=Api(status))


def test_each_cluster_answers_as_the_person_would_be_seen_there():
    person = Person("alice", ("team",), "alice", 0)
    clusters = [cluster("trusting", 201), cluster("plain", 201, "impersonate"),
                cluster("untrusting", 401), cluster("unimpersonating", 403, "impersonate"),
                cluster("down", None)]
    usability = Usability()
    got = asyncio.run(usability.of(clusters, "id-token", person))
    assert got == {"trusting": True, "plain": True, "untrusting": False,
                   "unimpersonating": False, "down": None}
    assert clusters[0].api.asked[0][0] == ("token", "id-token")
    assert clusters[1].api.asked[0][0] == ("gateway", person.impersonation())
    assert all(c.api.asked[0][2] == 3.0 for c in clusters)   # the deadline
    # Known answers are kept; the cluster that did not answer is asked again.
    asyncio.run(usability.of(clusters, "id-token", person))
    assert [len(c.api.asked) for c in clusters] == [1, 1, 1, 1, 2]
