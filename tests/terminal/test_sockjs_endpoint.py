"""The SockJS endpoint's safety settings: through the running gateway, and in process for the
timing-dependent parts (heartbeats at a short interval, close frames)."""

import asyncio
import json

import pytest
import tornado.httpclient
import tornado.httpserver
import tornado.web
import tornado.websocket

from dashboard_api import terminal
from dashboard_api.terminal import connection, transport
from tests.cluster.procs import free_ports

FOREIGN = "http://evil.example"


def no_cors(reply):
    return not any(h.lower().startswith("access-control-allow") for h in reply.headers)


def test_info_needs_no_cookie(gateway):
    reply = gateway.get("/api/sockjs/info")
    assert reply.status == 200, reply
    info = reply.json()
    assert info["websocket"] is True and info["cookie_needed"] is False
    assert info["origins"] == ["*:*"]
    assert "Set-Cookie" not in reply.headers
    assert no_cors(reply)


def test_polling_sets_no_session_cookie(gateway):
    reply = gateway.request("POST", "/api/sockjs/000/nocookie/xhr")
    assert reply.status == 200 and reply.data == b"o\n"
    assert "Set-Cookie" not in reply.headers


def test_same_origin_is_served_without_cors_headers(gateway):
    reply = gateway.get("/api/sockjs/info", headers={"Origin": gateway.url})
    assert reply.status == 200
    assert no_cors(reply)
    fetch = gateway.get("/api/sockjs/info", headers={"Origin": FOREIGN,
                                                     "Sec-Fetch-Site": "same-origin"})
    assert fetch.status == 200


@pytest.mark.parametrize("method,path", [
    ("GET", "/api/sockjs/info"),
    ("OPTIONS", "/api/sockjs/info"),
    ("POST", "/api/sockjs/000/foreign/xhr"),
    ("POST", "/api/sockjs/000/foreign/xhr_streaming"),
    ("OPTIONS", "/api/sockjs/000/foreign/xhr_send"),
    ("POST", "/api/sockjs/000/foreign/xhr_send"),
    ("GET", "/api/sockjs/000/foreign/eventsource"),
])
def test_cross_origin_requests_are_refused(gateway, method, path):
    headers = {"Origin": FOREIGN, "Access-Control-Request-Method": "POST"}
    reply = gateway.request(method, path, headers=headers, raw_body=b'["x"]'
                            if method == "POST" else None)
    assert reply.status == 403, reply
    assert no_cors(reply)
    cross_site = gateway.request(method, path, raw_body=b'["x"]' if method == "POST" else None,
                                 headers={"Origin": FOREIGN, "Sec-Fetch-Site": "cross-site"})
    assert cross_site.status == 403, cross_site


@pytest.mark.parametrize("path", [
    "/api/sockjs/000/jsonp1/jsonp?c=alert",
    "/api/sockjs/000/jsonp1/jsonp_send?c=alert",
    "/api/sockjs/000/html1/htmlfile?c=alert",
    "/api/sockjs/iframe.html",
    "/api/sockjs/iframe-1.6.1.html",
    "/api/sockjs/websocket",
])
def test_callback_and_iframe_transports_are_off(gateway, path):
    for method in ("GET", "POST"):
        reply = gateway.request(method, path, raw_body=b"d=x" if method == "POST" else None)
        assert reply.status == 404, (method, reply)
        assert b"alert" not in reply.data


async def websocket_open(url, origin):
    headers = {"Origin": origin} if origin else {}
    ws = await tornado.websocket.websocket_connect(
        tornado.httpclient.HTTPRequest(url, headers=headers, request_timeout=10))
    first = await ws.read_message()
    ws.close()
    return first


@pytest.mark.gen_test(timeout=30)
async def test_websocket_origin(gateway):
    url = gateway.url.replace("http", "ws", 1) + "/api/sockjs/000/wsorigin/websocket"
    assert await websocket_open(url, gateway.url) == "o"
    assert await websocket_open(url, None) == "o"  # not a browser
    with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
        await websocket_open(url, FOREIGN)
    assert refused.value.code == 403


def test_heartbeat_interval_is_at_most_25_seconds():
    assert 0 < transport.SETTINGS["heartbeat_delay"] <= 25


# --- in process: the session class and URL specs with a short heartbeat ---------------------

class Echo(transport.SockJSConnection):
    """Echoes messages; `close:<reason>` sends a frame and closes with code 2 and the reason."""

    def on_message(self, message):
        if message.startswith("close:"):
            self.send("bye")
            self.session.close(2, message[len("close:"):])
        else:
            self.send(message)


async def serve(heartbeat):
    router = transport.SockJSRouter(Echo, transport.PREFIX,
                                    dict(transport.SETTINGS, heartbeat_delay=heartbeat),
                                    session_kls=transport.TerminalSession)
    app = tornado.web.Application(transport.url_specs(router))
    server = tornado.httpserver.HTTPServer(app)
    [port] = free_ports(1)
    server.listen(port, "127.0.0.1")
    return server, "http://127.0.0.1:%d%s" % (port, transport.PREFIX)


async def stream(url, method, seconds):
    """Everything a streaming response carries during `seconds`."""
    chunks = []
    client = tornado.httpclient.AsyncHTTPClient(force_instance=True)
    try:
        await client.fetch(url, method=method, body=b"" if method == "POST" else None,
                           streaming_callback=chunks.append, request_timeout=seconds)
    except tornado.httpclient.HTTPClientError as exc:
        assert exc.code == 599, exc  # our own timeout ends the stream
    finally:
        client.close()
    return b"".join(chunks).decode()


@pytest.mark.parametrize("kind,method,heartbeat_frame", [
    ("xhr_streaming", "POST", "\nh\n"),
    ("eventsource", "GET", "data: h\r\n\r\n"),
])
@pytest.mark.gen_test(timeout=10)
async def test_streaming_transports_send_heartbeats(kind, method, heartbeat_frame):
    server, base = await serve(heartbeat=0.2)
    try:
        # Ten intervals asked for, three required: a loaded CI machine may delay a few.
        body = await stream("%s/000/hb%s/%s" % (base, kind, kind), method, 2.0)
    finally:
        server.stop()
    opened = body.index("o")
    assert body.count(heartbeat_frame, opened) >= 3, body[-200:]


@pytest.mark.gen_test(timeout=20)
async def test_close_reason_survives_quotes_and_a_busy_poll():
    reason = 'exec: "bash": not found \\ here'
    server, base = await serve(heartbeat=25)
    client = tornado.httpclient.AsyncHTTPClient(force_instance=True)
    session = "%s/000/closing" % base
    try:
        assert (await client.fetch(session + "/xhr", method="POST", body=b"")).body == b"o\n"
        # A poll waits; the message answers it and the close follows at once, while that
        # answer is still being written: the close frame must come with the next poll.
        poll = client.fetch(session + "/xhr", method="POST", body=b"")
        await asyncio.sleep(0.1)
        send = await client.fetch(session + "/xhr_send", method="POST",
                                  body=json.dumps(["close:" + reason]).encode())
        assert send.code == 204
        first = (await poll).body.decode()
        second = (await client.fetch(session + "/xhr", method="POST", body=b"")).body.decode()
    finally:
        client.close()
        server.stop()
    assert first == 'a["bye"]\n'
    assert second.startswith("c")
    assert json.loads(second[1:]) == [2, reason]


async def raw_sockjs(base, name):
    """A raw SockJS websocket, after its open frame."""
    ws = await tornado.websocket.websocket_connect(
        tornado.httpclient.HTTPRequest("%s/000/%s/websocket" % (base.replace("http", "ws", 1),
                                                                 name), request_timeout=5))
    assert await ws.read_message() == "o"
    return ws


async def closing_frame(ws):
    """The close frame the server sends next (heartbeats skipped), as [code, reason]."""
    while True:
        message = await asyncio.wait_for(ws.read_message(), 5)
        assert message is not None, "closed without a close frame"
        if message.startswith("c"):
            return json.loads(message[1:])


@pytest.mark.gen_test(timeout=20)
async def test_open_connections_are_limited():
    app = tornado.web.Application(terminal.sockjs_urls(max_connections=2))
    server = tornado.httpserver.HTTPServer(app)
    [port] = free_ports(1)
    server.listen(port, "127.0.0.1")
    base = "http://127.0.0.1:%d%s" % (port, transport.PREFIX)
    bad_bind = json.dumps([json.dumps({"Op": "bind", "SessionID": "0" * 32})])
    try:
        first, second = await raw_sockjs(base, "one"), await raw_sockjs(base, "two")
        third = await raw_sockjs(base, "three")
        assert await closing_frame(third) == [2, connection.BUSY]
        first.close()
        for attempt in range(50):  # until the server has seen the first one go
            fourth = await raw_sockjs(base, "four%d" % attempt)
            fourth.write_message(bad_bind)
            closed = await closing_frame(fourth)
            if closed != [2, connection.BUSY]:
                break
            await asyncio.sleep(0.1)
        # Let in this time: it went on to the bind, which names no session.
        assert closed == [2, connection.UNKNOWN_SESSION]
        second.close()
    finally:
        server.stop()
