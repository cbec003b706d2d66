"""Request logging: every request and response, the forwarded client address, no secrets."""

import time

from tests.gateway.helpers import full_log


def wait_for_line(gw, text, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = full_log(gw)
        if text in log:
            return log
        time.sleep(0.05)
    raise AssertionError("%r not logged:\n%s" % (text, full_log(gw)[-3000:]))


def sign_in(gw, cluster, client):
    with open(cluster.kubeconfig) as f:
        kubeconfig = f.read()
    for body in ({"token": cluster.admin_token}, {"kubeConfig": kubeconfig}):
        reply = gw.request("POST", "/api/v1/login", body=body, csrf="login",
                           headers={"X-Forwarded-For": client + ", 10.0.0.1"})
        assert reply.status == 200
    assert gw.get("/api/v1/me", token=cluster.admin_token).status == 200
    assert gw.request("PUT", "/settings", token=cluster.admin_token,
                      body={"clusterName": "x"}).status in (204, 404)


def test_info_log_has_requests_and_responses_but_no_bodies_or_tokens(start_gateway, cluster):
    gw = start_gateway()
    sign_in(gw, cluster, "203.0.113.7")
    log = wait_for_line(gw, "Outgoing response to 127.0.0.1 with")
    assert "Incoming HTTP/1.1 POST /api/v1/login request from 203.0.113.7" in log
    assert "Outgoing response to 203.0.113.7 with 200 status code" in log
    assert "Incoming HTTP/1.1 GET /api/v1/csrftoken/login request from 127.0.0.1" in log
    assert cluster.admin_token not in log
    assert "Body of" not in log and '"token"' not in log and "kubeConfig" not in log


def test_debug_log_shows_sign_in_bodies_redacted_and_still_no_tokens(start_gateway, cluster):
    gw = start_gateway("-v", "debug", "--cache-enabled")
    sign_in(gw, cluster, "198.51.100.2")
    log = wait_for_line(gw, 'Body of POST /api/v1/login from 198.51.100.2: {"kubeConfig"')
    assert 'Body of POST /api/v1/login from 198.51.100.2: {"token":"<redacted>"}' in log
    assert '{"kubeConfig":"<redacted>"}' in log
    assert 'Body of PUT /settings from 127.0.0.1: {"clusterName":"x"}' in log
    assert cluster.admin_token not in log


def test_client_address_headers_in_order(start_gateway):
    gw = start_gateway()
    gw.get("/config", headers={"X-Real-Ip": "192.0.2.3"})
    gw.get("/config", headers={"X-Real-Ip": "192.0.2.3", "X-Forwarded-For": "192.0.2.4"})
    gw.get("/config", headers={"X-Forwarded-For": "192.0.2.4",
                               "X-Original-Forwarded-For": "192.0.2.5, 192.0.2.9"})
    log = wait_for_line(gw, "Outgoing response to 192.0.2.5")
    for client in ("192.0.2.3", "192.0.2.4", "192.0.2.5"):
        assert "Incoming HTTP/1.1 GET /config request from %s" % client in log
