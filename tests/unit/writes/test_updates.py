"""Read-change-write retries on 409 conflicts (writes/updates.py), against a fake handle:
the race they handle cannot be provoked on demand in the real cluster."""

import asyncio

import pytest

from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.serving.errors import ApiError
from dashboard_api.writes.updates import ATTEMPTS, patch_retrying, update

DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", True, [])


class Reply:
    def __init__(self, status, obj):
        self.status, self.obj, self.data = status, obj, b"{}"

    def json(self):
        return self.obj


class FakeHandle:
    """Serves one object whose resourceVersion moves on each write; ``conflicts`` writes are
    answered 409 first, as when someone else wrote in between."""

    def __init__(self, conflicts):
        self.obj = {"metadata": {"name": "d", "resourceVersion": "1"}, "spec": {"replicas": 1}}
        self.conflicts = conflicts
        self.calls = []

    async def get(self, path):
        self.calls.append("GET")
        return {"metadata": dict(self.obj["metadata"]), "spec": dict(self.obj["spec"])}

    async def call(self, method, path, decode=False):
        return Reply(200, await self.get(path))

    async def request(self, method, path, body=None, content_type=None):
        self.calls.append(method)
        if self.conflicts:
            self.conflicts -= 1
            raise ApiError(409, "the object has been modified", "Conflict")
        if method == "PATCH":
            assert body["metadata"]["resourceVersion"] == self.obj["metadata"]["resourceVersion"]
            self.obj["spec"].update(body.get("spec", {}))
        else:
            self.obj = body
        return self.obj


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_update_reads_again_after_a_conflict():
    handle = FakeHandle(conflicts=2)
    result = run(update(handle, DEPLOYMENTS, "ns", "d",
                        lambda obj: obj["spec"].update(replicas=3)))
    assert result["spec"]["replicas"] == 3
    assert handle.calls == ["GET", "PUT", "GET", "PUT", "GET", "PUT"]


def test_update_gives_up_after_its_attempts_and_passes_other_errors():
    handle = FakeHandle(conflicts=ATTEMPTS)
    with pytest.raises(ApiError) as err:
        run(update(handle, DEPLOYMENTS, "ns", "d", lambda obj: None))
    assert err.value.code == 409 and handle.calls.count("PUT") == ATTEMPTS

    def refuse(obj):
        raise ApiError(409, "the Deployment is already paused", "Conflict")
    handle = FakeHandle(conflicts=0)
    with pytest.raises(ApiError, match="already paused"):
        run(update(handle, DEPLOYMENTS, "ns", "d", refuse))
    assert handle.calls == ["GET"]


def test_patch_is_recomputed_against_the_new_live_object():
    handle = FakeHandle(conflicts=1)
    seen = []

    def make(live):
        seen.append(live["metadata"]["resourceVersion"])
        return {"metadata": {"resourceVersion": live["metadata"]["resourceVersion"]},
                "spec": {"replicas": 2}}
    assert run(patch_retrying(handle, "/p", make))["spec"] == {"replicas": 2}
    assert len(seen) == 2 and handle.obj["spec"]["replicas"] == 2
    assert run(patch_retrying(FakeHandle(0), "/p", lambda live: {})) == {}
