"""--sidecar-token-file on the gateway's side: the token goes with every call to the sidecar;
the sidecar's newest scrape as the lists' validators read it (``epoch``)."""

import json
from types import SimpleNamespace

import pytest

from dashboard_api.kubeapi.client import Cluster, Response
from dashboard_api.metrics import sidecar as sidecar_mod


class Recorder:
    async def run(self, fn, pool, method, url, headers, body, deadline, stream, decode):
        self.seen = (method, url, headers)
        return Response(200, {}, b"{}")


@pytest.mark.gen_test(timeout=5)
async def test_through_the_service_proxy_the_token_has_a_header_of_its_own():
    cluster = Cluster.__new__(Cluster)
    cluster.config = SimpleNamespace(
        host="https://api", service_pool=object(), user_pool=object(),
        service_headers=lambda: {"Authorization": "Bearer service-identity"})
    cluster.executor = Recorder()
    cluster.buckets = SimpleNamespace(for_caller=lambda token: None)
    cluster.timeout = 5
    cluster.connect_timeout = 2
    client = sidecar_mod.SidecarClient(cluster, namespace="ns", service="side", token="s3cret")
    assert await client.get("/healthz") == (200, b"{}")
    method, url, headers = cluster.executor.seen
    assert url == "https://api/api/v1/namespaces/ns/services/side/proxy/healthz"
    assert headers["Authorization"] == "Bearer service-identity"  # the API server's
    assert headers[sidecar_mod.TOKEN_HEADER] == "s3cret"  # the sidecar's


def test_the_token_file_is_read_and_checked(tmp_path):
    path = tmp_path / "token"
    path.write_text("  abc \n")
    assert sidecar_mod.read_token(str(path)) == "abc"
    path.write_text("\n")
    with pytest.raises(OSError, match="empty"):
        sidecar_mod.read_token(str(path))
    with pytest.raises(OSError, match="--sidecar-token-file"):
        sidecar_mod.read_token(str(tmp_path / "missing"))


class Scraping:
    """A sidecar's /healthz as the gateway reads it: its newest scrape and when the next is."""

    def __init__(self, clock):
        self.clock = clock
        self.asked = 0
        self.body = {"status": "ok", "lastScrapeAt": 1000.0, "nextScrapeInSeconds": 10.0}

    async def get(self, path):
        assert path == "/healthz"
        self.asked += 1
        return 200, json.dumps(self.body).encode()


@pytest.mark.gen_test(timeout=5)
async def test_the_epoch_is_the_newest_scrape_until_the_next_may_start():
    now = [0.0]
    client = sidecar_mod.SidecarClient(None, base_url="http://side", clock=lambda: now[0])
    side = Scraping(now)
    client.get = side.get
    assert await client.epoch() == 1000.0 and side.asked == 1
    now[0] = 9.9
    assert await client.epoch() == 1000.0 and side.asked == 1     # not asked again
    now[0] = 10.0                                                 # the next may have started
    side.body = {"status": "ok", "lastScrapeAt": 1000.0, "nextScrapeInSeconds": 0.0}
    assert await client.epoch() is None and side.asked == 2       # under way: no epoch
    now[0] = 10.2
    assert await client.epoch() is None and side.asked == 2       # not asked within the retry
    now[0] = 10.6
    side.body = {"status": "ok", "lastScrapeAt": 1010.0, "nextScrapeInSeconds": 10.0}
    assert await client.epoch() == 1010.0 and side.asked == 3
    assert client.known_epoch == 1010.0


@pytest.mark.gen_test(timeout=5)
async def test_a_sidecar_that_does_not_say_gives_no_epoch():
    now = [0.0]
    client = sidecar_mod.SidecarClient(None, base_url="http://side", clock=lambda: now[0])
    side = Scraping(now)
    side.body = {"status": "ok"}   # an older sidecar, or one that refused our token
    client.get = side.get
    assert await client.epoch() is None
    assert await client.check() is True   # healthy all the same
    assert client.current_epoch() is None
