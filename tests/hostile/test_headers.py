"""Responses are hardened: nosniff on every answer (ours, Tornado's, SockJS', the 413 and the
connection refusal), no-store on API answers that carry cluster data, and the web UI may not
be framed (X-Frame-Options: DENY, CSP frame-ancestors 'none')."""

import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="module")
def web_gateway(cluster, tmp_path_factory):
    root = tmp_path_factory.mktemp("ui")
    (root / "index.html").write_text("<html><body>ui</body></html>")
    (root / "main.js").write_text("console.log(1)")
    gw = Gateway.start(cluster, "--watch-cache=false", "--web-root", str(root),
                       "--max-body-size", "64Ki")
    yield gw
    gw.stop()


def test_the_web_root_cannot_be_framed(web_gateway):
    for path in ("/", "/index.html", "/main.js", "/some/ui/route", "/missing/"):
        reply = web_gateway.get(path)
        assert reply.status in (200, 404), (path, reply)
        assert reply.headers.get("X-Frame-Options") == "DENY", path
        assert reply.headers.get("Content-Security-Policy") == "frame-ancestors 'none'", path
        assert reply.headers.get("X-Content-Type-Options") == "nosniff", path


def test_every_answer_says_nosniff(web_gateway, admin_token):
    gw = web_gateway
    answers = [gw.get("/api/v1/namespace", token=admin_token),       # cluster data
               gw.get("/api/v1/pod/default/nosuchpod", token=admin_token),   # 404
               gw.get("/api/v1/namespace"),                           # 401
               gw.get("/healthz"), gw.get("/metrics"), gw.get("/config"),
               gw.get("/api/sockjs/info"),                            # sockjs-tornado
               gw.request("POST", "/api/v1/login", raw_body=b"x" * 70_000,
                          headers={"Content-Type": "application/json"}),   # 413
               gw.request("GET", "/api/v1/namespace", raw_body=b"x" * 70_000,
                          token=admin_token)]
    for reply in answers:
        assert reply.headers.get("X-Content-Type-Options") == "nosniff", reply


def test_api_answers_with_cluster_data_are_not_stored(web_gateway, admin_token):
    gw = web_gateway
    for path in ("/api/v1/namespace", "/api/v1/pod/default", "/api/v1/node",
                 "/api/v1/namespace/default", "/api/v1/me", "/api/v1/pod/default/missing"):
        reply = gw.get(path, token=admin_token)
        assert reply.headers.get("Cache-Control") == "no-store", (path, reply)
