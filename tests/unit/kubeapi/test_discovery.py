import asyncio

import pytest

from dashboard_api.kubeapi.discovery import Discovery
from dashboard_api.serving.errors import ApiError

DOCS = {
    "/api": {"versions": ["v1"]},
    "/apis": {"groups": [{"name": "batch", "preferredVersion": {"version": "v1"},
                          "versions": [{"version": "v1"}, {"version": "v1beta1"}]}]},
    "/api/v1": {"resources": [{"name": "pods", "kind": "Pod", "namespaced": True},
                              {"name": "pods/log", "kind": "Pod", "namespaced": True}]},
    "/apis/batch/v1": {"resources": [{"name": "jobs", "kind": "Job", "namespaced": True}]},
    "/apis/batch/v1beta1": {"resources": [{"name": "cronjobs", "kind": "CronJob",
                                           "namespaced": True}]},
}


class FakeHandle:
    """Serves discovery documents after a short delay, counting calls; `fail` answers 401."""

    def __init__(self, fail=False):
        self.fail = fail
        self.calls = []

    async def get(self, path):
        self.calls.append(path)
        await asyncio.sleep(0.01)
        if self.fail and path not in ("/api", "/apis"):
            raise ApiError(401, "Unauthorized")
        return DOCS[path]


@pytest.mark.gen_test
async def test_versions_are_chosen_from_what_the_server_serves():
    discovery, handle = Discovery(), FakeHandle()
    cron = await discovery.resolve(handle, "batch", "cronjobs", ("v1", "v1beta1"))
    pods = await discovery.resolve(handle, "", "pods")
    assert cron.api_version == "batch/v1beta1"
    assert pods.subresources == ["log"]
    assert pods.path("ns", "p", "log") == "/api/v1/namespaces/ns/pods/p/log"


@pytest.mark.gen_test
async def test_concurrent_askers_share_one_fetch():
    discovery, handle = Discovery(), FakeHandle()
    await asyncio.gather(*(discovery.resolve(handle, "batch", "jobs") for _ in range(10)))
    assert handle.calls.count("/apis/batch/v1") == 1


@pytest.mark.gen_test
async def test_a_bad_token_does_not_fail_the_others():
    discovery = Discovery()
    await discovery.resolve(FakeHandle(), "", "pods")  # groups known
    bad, good = FakeHandle(fail=True), FakeHandle()
    bad_result, good_result = await asyncio.gather(discovery.resolve(bad, "batch", "jobs"),
                                                   discovery.resolve(good, "batch", "jobs"),
                                                   return_exceptions=True)
    assert isinstance(bad_result, ApiError) and bad_result.code == 401
    assert good_result.plural == "jobs"


@pytest.mark.gen_test
async def test_names_are_single_path_segments():
    pods = await Discovery().resolve(FakeHandle(), "", "pods")
    assert pods.path("a b", "x:y") == "/api/v1/namespaces/a%20b/pods/x%3Ay"
    for bad in ("..", ".", "a/b", "a%2Fb"):
        with pytest.raises(ApiError) as caught:
            pods.path("ns", bad)
        assert caught.value.code == 400
