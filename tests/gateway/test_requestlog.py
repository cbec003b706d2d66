"""Request logging: every request and response, the forwarded client address, no secrets."""

import secrets
import socket

from dashboard_api.serving import requestlog
from tests.gateway.helpers import full_log
from tests.support.waiting import wait_for


def wait_for_line(gw, text, timeout=5):
    def logged():
        log = full_log(gw)
        return log if text in log else None
    try:
        return wait_for(logged, timeout, 0.05, "%r in the log" % text)
    except TimeoutError:
        raise AssertionError("%r not logged:\n%s" % (text, full_log(gw)[-3000:])) from None


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
    # The PUT is the last request: its line, written once its response is out, comes last.
    log = wait_for_line(gw, 'Body of PUT /settings from 127.0.0.1: {"clusterName":"x"}')
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


def raw_request(gw, lines):
    """Sends a hand-made HTTP/1.1 request (one a client library would refuse to send)."""
    host, port = gw.url.rsplit("/", 1)[1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall("\r\n".join(lines + ["", ""]).encode("latin-1"))
        return s.recv(200)


def test_malformed_requests_are_logged_without_their_header_values(start_gateway):
    gw = start_gateway()
    secret = "se" + "cret" + secrets.token_hex(8)
    # A control character makes Tornado refuse the header (and quote its value at INFO).
    for value in ("Bearer %s\x7f" % secret, "Bearer se\x7f%s" % secret[2:]):
        reply = raw_request(gw, ["GET /api/v1/me HTTP/1.1", "Host: x", "Authorization: " + value])
        assert reply.startswith(b"HTTP/1.1 400")
    log = wait_for_line(gw, "Malformed HTTP message from")
    assert secret not in log and secret[2:] not in log
    assert log.count("Malformed HTTP message from 127.0.0.1 (detail not logged)") == 2


def test_terminal_session_ids_stay_out_of_every_log_line(start_gateway):
    gw = start_gateway("-v", "debug")
    session = "sess" + secrets.token_hex(6)
    path = "/api/sockjs/0/%s/xhr" % session
    refused = gw.request("POST", path, headers={"Origin": "http://evil.example"})
    assert refused.status == 403
    assert gw.request("POST", path).status == 200  # our own page's poll opens the session
    log = wait_for_line(gw, "cross-origin request refused")
    assert session not in log
    shown = "/api/sockjs/0/fp-%s/xhr" % requestlog.fingerprint(session)
    assert "403 POST %s (127.0.0.1): cross-origin request refused" % shown in log
    assert "Incoming HTTP/1.1 POST %s request from 127.0.0.1" % shown in log
