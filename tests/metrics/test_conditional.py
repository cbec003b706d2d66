"""Conditional lists with metrics (issue #40): a list's metrics change only when the sidecar
stores a scrape, and its ``/healthz`` says when the newest was taken (``lastScrapeAt``); the
list's validator names that scrape. So a pod list with metrics is a 304 while no scrape was
stored, and a 200 with the new points once one was, in the web UI's shapes (the sidecar's
answers shared between callers, within one scrape only)."""

import pytest

from tests.metrics.conftest import new_sidecar
from tests.metrics.sidecar import health, wait_health, wait_points
from tests.support.gateway import Gateway

RESOLUTION = 3.0   # seconds between the slow sidecar's scrapes: room for a 304 between them


@pytest.fixture(scope="module")
def slow_sidecar(cluster, sidecar_token, state_dir, metrics_ns):
    side = new_sidecar(cluster, sidecar_token, state_dir, "slow", resolution="%gs" % RESOLUTION,
                       duration="60s")
    side.start()
    wait_points(side, "/api/v1/pod/" + metrics_ns, 1)
    yield side
    side.stop()


@pytest.fixture(scope="module")
def slow_gateway(cluster, slow_sidecar):
    """--web-ui-compat: the sidecar answers shared between callers, within one scrape (the
    specification's shapes read the same epoch, unshared)."""
    gw = Gateway.start(cluster, "--sidecar-host", slow_sidecar.url,
                       "--metric-client-check-period", "0.5s", "--web-ui-compat")
    gw.wait_cache_synced()
    yield gw
    gw.stop()


def test_a_list_with_metrics_is_a_304_until_the_next_scrape(slow_gateway, slow_sidecar,
                                                             metrics_ns, admin_token):
    gw = slow_gateway
    path = "/api/v1/pod/" + metrics_ns
    params = None   # upstream's standard metrics, as the web UI asks

    def page():
        reply = gw.get(path, token=admin_token, params=params)
        assert reply.status == 200 and "warning" not in reply.json(), reply
        return reply

    # The gateway's health check has passed once the list carries metrics.
    wait_health(slow_sidecar, lambda h: h.get("lastScrapeAt"), "a stored scrape")
    for _ in range(3):   # a scrape stored between the two requests makes the second a 200
        before = health(slow_sidecar)["lastScrapeAt"]
        first = page()
        tag = first.headers["ETag"]
        held = gw.get(path, token=admin_token, params=params, headers={"If-None-Match": tag})
        if health(slow_sidecar)["lastScrapeAt"] == before:
            break
    assert held.status == 304, held
    assert held.headers["ETag"] == tag

    # The next scrape is stored: the page is a 200 under a new tag, the page as it is now
    # (the stand-in's points may not have moved: what the tag follows is the scrape).
    after = wait_health(slow_sidecar, lambda h: h["lastScrapeAt"] != before, "the next scrape",
                        timeout=3 * RESOLUTION)["lastScrapeAt"]
    changed = gw.get(path, token=admin_token, params=params, headers={"If-None-Match": tag})
    assert changed.status == 200, changed
    new_tag = changed.headers["ETag"]
    assert new_tag != tag
    now = page()
    if health(slow_sidecar)["lastScrapeAt"] == after:
        assert now.json() == changed.json()
        assert now.headers["ETag"] == new_tag
