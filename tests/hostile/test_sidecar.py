"""Attack: anyone who reaches the metrics sidecar reads every pod's and node's metrics.

With --sidecar-token-file on both sides, the sidecar answers 401 to any request without the
shared token (Authorization: Bearer, or X-Dashboard-Sidecar-Token through the API server's
service proxy, which keeps the Authorization header for itself); /healthz stays open to a
request without credentials (kubelet probes) but shows the scrape details only to the token
holder, and refuses a wrong token. The gateway sends the token and its metrics keep working.
"""

import os
import secrets

import pytest
import urllib3

from tests.metrics.sidecar import Sidecar
from tests.support.gateway import Gateway
from tests.support.probe import Probe


@pytest.fixture(scope="module")
def token_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sidecar-token")
    token = secrets.token_urlsafe(32)
    right, wrong = directory / "token", directory / "wrong"
    right.write_text(token + "\n")
    wrong.write_text(secrets.token_urlsafe(32))
    os.chmod(right, 0o600)
    return token, str(right), str(wrong)


@pytest.fixture(scope="module")
def guarded_sidecar(cluster, token_files, tmp_path_factory):
    kubeconfig = cluster.metrics_kubeconfig(
        str(tmp_path_factory.mktemp("sidecar") / "kubeconfig"))
    side = Sidecar(kubeconfig, resolution="1s", duration="6s")
    side.argv += ["--sidecar-token-file", token_files[1]]
    side.start()
    yield side
    side.stop()


def call(side, path, headers=None):
    reply = urllib3.request("GET", side.url + path, headers=headers or {}, retries=False,
                            timeout=5)
    return reply.status, reply.json() if reply.data else None


def test_the_sidecar_refuses_requests_without_its_token(guarded_sidecar, token_files):
    token = token_files[0]
    for path in ("/api/v1/node", "/api/v1/pod/default", "/api/v1/nope",
                 "/api/v1/dashboard/nodes/x/metrics/cpu/usage_rate"):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": token},
                        {"X-Dashboard-Sidecar-Token": token[:-1]}):
            status, body = call(guarded_sidecar, path, headers)
            assert status == 401 and body["reason"] == "Unauthorized", (path, headers, body)
        for headers in ({"Authorization": "Bearer " + token},
                        {"X-Dashboard-Sidecar-Token": token}):
            status, _ = call(guarded_sidecar, path, headers)
            assert status in (200, 404), (path, headers, status)
    # /healthz: open for probes, the details only with the token, a wrong token refused.
    assert call(guarded_sidecar, "/healthz") == (200, {"status": "ok"})
    status, body = call(guarded_sidecar, "/healthz", {"Authorization": "Bearer " + token})
    assert status == 200 and "scrapes" in body
    assert call(guarded_sidecar, "/healthz", {"Authorization": "Bearer no"})[0] == 401


@pytest.mark.parametrize("which,healthy", [(1, True), (2, False)])
def test_the_gateway_sends_the_token(cluster, admin_token, guarded_sidecar, token_files,
                                     which, healthy):
    gw = Gateway.start(cluster, "--watch-cache=false", "--sidecar-host", guarded_sidecar.url,
                       "--sidecar-token-file", token_files[which],
                       "--metric-client-check-period", "0.5s")
    try:
        with Probe(gw, admin_token) as probe:
            def checked():
                reply = gw.get("/api/v1/integration/sidecar/health", token=admin_token)
                return reply if reply.status in (200, 503) else None
            reply = cluster.wait_for(checked, timeout=15, what="the sidecar's health")
            assert (reply.status == 200) == healthy, reply
            if not healthy:
                assert "401" in reply.json()["message"], reply
        probe.assert_responsive(max_seconds=1.0)
        assert token_files[0] not in gw.log(whole=True)
    finally:
        gw.stop()


def test_an_unreadable_token_file_stops_the_start(cluster, tmp_path):
    with pytest.raises(RuntimeError, match="sidecar-token-file"):
        Gateway.start(cluster, "--sidecar-host", "http://127.0.0.1:9",
                      "--sidecar-token-file", str(tmp_path / "missing"), timeout=15)
