"""Request logging: client address order and what a body may show."""

import logging
from types import SimpleNamespace

from tornado.httputil import HTTPHeaders

from dashboard_api import requestlog


def headers(**kw):
    h = HTTPHeaders()
    for k, v in kw.items():
        h.add(k.replace("_", "-"), v)
    return h


def test_client_address_order():
    peer = "10.0.0.9"
    assert requestlog.client_address(headers(), peer) == peer
    assert requestlog.client_address(headers(X_Real_Ip="3.3.3.3"), peer) == "3.3.3.3"
    assert requestlog.client_address(
        headers(X_Real_Ip="3.3.3.3", X_Forwarded_For="2.2.2.2, 9.9.9.9"), peer) == "2.2.2.2"
    assert requestlog.client_address(
        headers(X_Real_Ip="3.3.3.3", X_Forwarded_For="2.2.2.2",
                X_Original_Forwarded_For="1.1.1.1, 8.8.8.8"), peer) == "1.1.1.1"
    assert requestlog.client_address(headers(X_Forwarded_For=","), peer) == peer


def test_debug_bodies_are_redacted_deeply():
    body = (b'{"token": "s3cret", "kubeConfig": "users: [...]", "name": "x", '
            b'"items": [{"data": {"k": "v"}, "Password": "p"}], "spec": {"replicas": 2}}')
    shown = requestlog.describe_body("/api/v1/login", body)
    for secret in ("s3cret", "users:", '"v"', '"p"'):
        assert secret not in shown
    assert '"name":"x"' in shown and '"replicas":2' in shown


def test_non_json_and_long_bodies():
    assert requestlog.describe_body("/x", b"\x00\x01") == "<2 bytes, not JSON>"
    shown = requestlog.describe_body("/x", b'{"a": "%s"}' % (b"x" * 5000))
    assert len(shown) < requestlog.MAX_BODY_CHARS + 50


def test_terminal_traffic_is_never_shown():
    keys = b'["{\\"Op\\":\\"stdin\\",\\"Data\\":\\"hunter2\\"}"]'
    shown = requestlog.describe_body("/api/sockjs/1/abc/xhr_send", keys)
    assert "hunter2" not in shown and "terminal traffic" in shown


def test_token_like_query_values_are_redacted():
    req = SimpleNamespace(path="/api/v1/pod", query="sortBy=d,name&access_token=abc&apiKey=k")
    shown = requestlog.describe_uri(req)
    assert "abc" not in shown and "=k" not in shown and "sortBy=d,name" in shown
    assert "access_token=<redacted>" in shown
    assert requestlog.describe_uri(SimpleNamespace(path="/x", query="")) == "/x"


def test_terminal_session_ids_in_queries_are_not_shown():
    # sockjs-client repeats the page's query (the terminal session id) on its info request.
    req = SimpleNamespace(path="/api/sockjs/info", query="3f2a9c0d1e&t=1700000000")
    assert requestlog.describe_uri(req) == "/api/sockjs/info"


def test_sockjs_session_ids_are_not_shown():
    for path, shown in (("/api/sockjs/0/abc123/xhr_send", "/api/sockjs/0/*/xhr_send"),
                        ("/api/sockjs/123/abc123/websocket", "/api/sockjs/123/*/websocket"),
                        ("/api/sockjs/0/abc123", "/api/sockjs/0/*"),
                        ("/api/sockjs/info", "/api/sockjs/info")):
        assert requestlog.describe_uri(SimpleNamespace(path=path, query="")) == shown
        assert requestlog.describe_uri(SimpleNamespace(path=path, query="t=1")) == shown


def record(msg, *args, name="tornado.general"):
    return logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args, None)


def filtered(rec):
    assert requestlog.TornadoLogFilter().filter(rec) is True  # the event is kept
    return rec.getMessage()


def test_tornado_refusals_of_terminal_requests_lose_the_session_id():
    # RequestHandler.log_exception's own format for an HTTPError with a log message.
    rec = record("%d %s: %s", 403, "POST /api/sockjs/0/abc123/xhr?x=abc123 (10.0.0.1)",
                 "cross-origin request refused")
    assert filtered(rec) == \
        "403 POST /api/sockjs/0/*/xhr (10.0.0.1): cross-origin request refused"
    rec = record("Uncaught exception %s\n%r", "GET /api/sockjs/1/abc123/websocket (::1)",
                 SimpleNamespace(uri="/api/sockjs/1/abc123/websocket"))
    assert "abc123" not in filtered(rec)
    claim = record("Attempted to attach to session abc123 (10.0.0.1) from different IP "
                   "(10.0.0.2)")
    assert filtered(claim) == "Attempted to attach to session * (10.0.0.1) from different IP " \
        "(10.0.0.2)"
    other = record("%d %s: %s", 404, "GET /api/v1/pod/x (10.0.0.1)", "gone")
    assert filtered(other) == "404 GET /api/v1/pod/x (10.0.0.1): gone"


def test_malformed_request_records_keep_the_event_but_not_the_detail():
    error = ValueError("Invalid header value 'Bearer s3cret\\x7f'")
    rec = record("Malformed HTTP message from %s: %s", "10.0.0.1", error)
    assert filtered(rec) == "Malformed HTTP message from 10.0.0.1 (detail not logged)"

