"""Request logging: client address order and what a body may show."""

import logging
from types import SimpleNamespace

import ujson
from tornado.httputil import HTTPHeaders

from dashboard_api.serving import requestlog


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


def test_queries_with_nothing_to_redact_are_shown_as_they_came():
    req = SimpleNamespace(path="/api/v1/pod/ns", query="itemsPerPage=10&sortBy=d%2Cname&page=2")
    assert requestlog.describe_uri(req) == "/api/v1/pod/ns?itemsPerPage=10&sortBy=d%2Cname&page=2"
    # a redacted name spelled with escapes, or in another case, is still found and redacted
    for query in ("sortBy=a&%6Bey=secret", "sortBy=a&API%5FKEY=secret", "Token=secret",
                  "filterBy=name,x&id%5Ftoken=secret", "Code=secret", "session%5Fstate=secret"):
        shown = requestlog.describe_uri(SimpleNamespace(path="/x", query=query))
        assert "secret" not in shown and "<redacted>" in shown, query


def test_terminal_session_ids_in_queries_are_not_shown():
    # sockjs-client repeats the page's query (the terminal session id) on its info request.
    req = SimpleNamespace(path="/api/sockjs/info", query="3f2a9c0d1e&t=1700000000")
    assert requestlog.describe_uri(req) == "/api/sockjs/info"


FP = "fp-" + requestlog.fingerprint("abc123")


def test_sockjs_session_ids_are_shown_as_fingerprints():
    assert len(FP) == 15 and "abc123" not in FP
    for path, shown in (("/api/sockjs/0/abc123/xhr_send", "/api/sockjs/0/%s/xhr_send" % FP),
                        ("/api/sockjs/123/abc123/websocket",
                         "/api/sockjs/123/%s/websocket" % FP),
                        ("/api/sockjs/0/abc123", "/api/sockjs/0/%s" % FP),
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
        "403 POST /api/sockjs/0/%s/xhr (10.0.0.1): cross-origin request refused" % FP
    rec = record("Uncaught exception %s\n%r", "GET /api/sockjs/1/abc123/websocket (::1)",
                 SimpleNamespace(uri="/api/sockjs/1/abc123/websocket"))
    assert "abc123" not in filtered(rec)
    claim = record("Attempted to attach to session abc123 (10.0.0.1) from different IP "
                   "(10.0.0.2)")
    assert filtered(claim) == "Attempted to attach to session %s (10.0.0.1) from different " \
        "IP (10.0.0.2)" % FP
    other = record("%d %s: %s", 404, "GET /api/v1/pod/x (10.0.0.1)", "gone")
    assert filtered(other) == "404 GET /api/v1/pod/x (10.0.0.1): gone"


def test_malformed_request_records_keep_the_event_but_not_the_detail():
    error = ValueError("Invalid header value 'Bearer s3cret\\x7f'")
    rec = record("Malformed HTTP message from %s: %s", "10.0.0.1", error)
    assert filtered(rec) == "Malformed HTTP message from 10.0.0.1 (detail not logged)"



def test_bodies_that_may_carry_a_secret_show_only_their_size():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "annotations": {
        "kubectl.kubernetes.io/last-applied-configuration": '{"stringData":{"pw":"hunter2"}}'}},
        "type": "Opaque", "stringData": {"pw": "hunter2"}}
    body = ujson.dumps(secret).encode()
    for path in ("/api/v1/_raw/secret/namespace/default/name/s",
                 "/api/v1/_raw/configmap/namespace/default/name/c", "/api/v1/secret",
                 "/api/v1/appdeploymentfromfile", "/api/v1/anything-else"):
        shown = requestlog.describe_body(path, body)
        assert "hunter2" not in shown and "bytes" in shown, (path, shown)
    listed = ujson.dumps({"kind": "List", "items": [secret]}).encode()
    assert "hunter2" not in requestlog.describe_body("/api/v1/x", listed)
    # Annotations of any object are redacted: they may repeat a whole object.
    shown = requestlog.describe_body("/settings", ujson.dumps(
        {"metadata": {"name": "n", "annotations": {"a": "pw=hunter2"}}}).encode())
    assert "hunter2" not in shown and '"name":"n"' in shown


def test_audit_seam_gives_a_writes_entries_to_its_sink_or_else_to_the_log(caplog):
    import base64
    claims = base64.urlsafe_b64encode(b'{"sub":"system:serviceaccount:x:y"}').rstrip(b"=")
    token = "e30." + claims.decode() + ".sig"
    h = headers(Authorization="Bearer " + token)

    def handler(method="POST", audit=True, **more):
        return SimpleNamespace(
            request=SimpleNamespace(method=method, path="/api/v1/namespace", query="",
                                    headers=h),
            route=SimpleNamespace(audit=audit, resource="namespace",
                                  operation=lambda m: "namespace-create"),
            get_status=lambda: 403, **more)
    # Without a handler's own entries and sink: one JSON line, the user unverified.
    with caplog.at_level(logging.INFO, logger="dashboard_api.audit"):
        requestlog.audit(handler())
    [line] = [r.getMessage() for r in caplog.records]
    assert ujson.loads(line) == {"user": "system:serviceaccount:x:y", "userVerified": False,
                                 "method": "POST", "route": "namespace-create",
                                 "path": "/api/v1/namespace", "status": 403}
    assert token not in line
    # A handler's entries go to its sink (the trail logs them); reads and unaudited routes,
    # nothing.
    got = []
    requestlog.audit(handler(audit_entries=lambda: [{"id": 1}], audit_sink=got.append))
    requestlog.audit(handler(method="GET", audit_entries=lambda: [{"id": 2}],
                             audit_sink=got.append))
    requestlog.audit(handler(audit=False, audit_entries=lambda: [{"id": 3}],
                             audit_sink=got.append))
    assert got == [[{"id": 1}]]


def test_library_debug_loggers_are_held_at_info():
    requestlog.quiet_library_loggers()
    for name in ("urllib3", "urllib3.connectionpool", "kubernetes.client.rest"):
        assert not logging.getLogger(name).isEnabledFor(logging.DEBUG), name
