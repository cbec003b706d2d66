"""The SockJS endpoint's safety settings: through the running gateway, and in process for the
timing-dependent parts (heartbeats at a short interval, close frames)."""

import asyncio
import json

import pytest
import tornado.httpclient
import tornado.httpserver
import tornado.web
import tornado.websocket
import urllib3

from dashboard_api.terminal import connection, endpoint as terminal, owner, transport
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


def owner_cookie(reply):
    """The name=value of the session owner's cookie the reply sets (and checks its flags)."""
    [line] = reply.headers.getlist("Set-Cookie")
    pair, *attributes = [part.strip() for part in line.split(";")]
    assert pair.startswith(owner.COOKIE + "=")
    assert {"HttpOnly", "SameSite=Strict"} <= set(attributes), line
    return pair, [a for a in attributes if a.startswith("Path=")]


def test_polling_sets_only_the_owner_cookie_scoped_to_its_session(gateway):
    reply = gateway.request("POST", "/api/sockjs/000/nocookie/xhr")
    assert reply.status == 200 and reply.data == b"o\n"
    _pair, path = owner_cookie(reply)  # no JSESSIONID
    assert path == ["Path=/api/sockjs/000/nocookie"]


@pytest.mark.parametrize("opener", ["xhr", "xhr_streaming", "eventsource"])
def test_only_the_opener_may_use_a_session(gateway, opener):
    session = "owned-" + opener
    method = "GET" if opener == "eventsource" else "POST"
    base = "/api/sockjs/000/%s/" % session
    stream = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=10))
    try:
        # A streaming answer stays open (its end would close the session): headers only.
        response = stream.request(method, gateway.url + base + opener, preload_content=False)
        mine, _ = owner_cookie(response)
        check_ownership(gateway, base, mine, opener)
    finally:
        stream.clear()


def check_ownership(gateway, base, mine, opener):
    other, _ = owner_cookie(gateway.request("POST", "/api/sockjs/000/other-%s/xhr" % opener))
    keys = b'["{\\"Op\\":\\"stdin\\",\\"Data\\":\\"id\\\\r\\"}"]'
    value = mine.split("=", 1)[1]
    middle = len(value) - 10  # inside the MAC, whose every bit there counts
    forged = owner.COOKIE + "=" + value[:middle] + ("A" if value[middle] != "A" else "B") \
        + value[middle + 1:]
    for cookie in (None, other, forged, owner.COOKIE + "=x.y", owner.COOKIE + "="):
        headers = {"Cookie": cookie} if cookie else {}
        sent = gateway.request("POST", base + "xhr_send", raw_body=keys, headers=headers)
        assert sent.status == 403, (cookie, sent)
        poll = gateway.request("POST", base + "xhr", headers=headers)
        assert poll.status == 403, (cookie, poll)
    sent = gateway.request("POST", base + "xhr_send", raw_body=keys, headers={"Cookie": mine})
    assert sent.status == 204, sent
    # A session nobody opened: still the library's 404, cookie or not.
    assert gateway.request("POST", "/api/sockjs/000/nobody/xhr_send", raw_body=keys,
                           headers={"Cookie": mine}).status == 404


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
        opened = await client.fetch(session + "/xhr", method="POST", body=b"")
        assert opened.body == b"o\n"
        # The opener's cookie, sent back as a browser would (only the opener may go on).
        mine = {"Cookie": opened.headers["Set-Cookie"].split(";")[0]}
        # A poll waits; the message answers it and the close follows at once, while that
        # answer is still being written: the close frame must come with the next poll.
        poll = client.fetch(session + "/xhr", method="POST", body=b"", headers=mine)
        await asyncio.sleep(0.1)
        send = await client.fetch(session + "/xhr_send", method="POST", headers=mine,
                                  body=json.dumps(["close:" + reason]).encode())
        assert send.code == 204
        first = (await poll).body.decode()
        second = (await client.fetch(session + "/xhr", method="POST", body=b"",
                                     headers=mine)).body.decode()
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


class FakeTerminal:
    def start(self, conn, on_end):
        pass

    def stop(self):
        pass


class FakeSessions:
    """Binds any id starting with "ok"."""

    def bind(self, session_id, conn):
        return FakeTerminal() if session_id.startswith("ok") else None


def bind_frame(session_id):
    return json.dumps([json.dumps({"Op": "bind", "SessionID": session_id})])


async def is_open(ws, seconds=0.3):
    """Whether nothing but heartbeats came within `seconds` (no close frame)."""
    try:
        message = await asyncio.wait_for(ws.read_message(), seconds)
    except asyncio.TimeoutError:
        return True
    return message is not None and not message.startswith("c")


async def endpoint(**budgets):
    conn_class = connection.connection_class(FakeSessions(), **budgets)
    app = tornado.web.Application(transport.url_specs(transport.router(conn_class)))
    server = tornado.httpserver.HTTPServer(app)
    [port] = free_ports(1)
    server.listen(port, "127.0.0.1")
    return conn_class, server, "http://127.0.0.1:%d%s" % (port, transport.PREFIX)


@pytest.mark.gen_test(timeout=30)
async def test_unbound_connections_evict_the_oldest_and_bound_ones_are_limited():
    conn_class, server, base = await endpoint(limit=3, unbound_limit=2, per_client=5)
    try:
        a, b = await raw_sockjs(base, "a"), await raw_sockjs(base, "b")
        c = await raw_sockjs(base, "c")  # a third unbound one: the oldest makes room
        assert await closing_frame(a) == [2, connection.EVICTED]
        b.write_message(bind_frame("ok-b"))
        c.write_message(bind_frame("ok-c"))
        assert await is_open(b) and await is_open(c)
        d = await raw_sockjs(base, "d")
        e = await raw_sockjs(base, "e")  # all 3 places taken: the unbound d makes room
        assert await closing_frame(d) == [2, connection.EVICTED]
        e.write_message(bind_frame("ok-e"))
        assert await is_open(e)
        f = await raw_sockjs(base, "f")  # every open connection is bound: refused
        assert await closing_frame(f) == [2, connection.BUSY]
        assert await is_open(b, 0.1) and await is_open(c, 0.1) and await is_open(e, 0.1)
        assert conn_class.gate.open == 3 and not conn_class.gate.unbound
        for ws in (b, c, e):
            ws.close()
    finally:
        server.stop()


@pytest.mark.gen_test(timeout=30)
async def test_a_client_at_its_unbound_budget_gets_429_before_any_connection():
    conn_class, server, base = await endpoint(limit=10, per_client=2)
    client = tornado.httpclient.AsyncHTTPClient(force_instance=True)
    try:
        a, b = await raw_sockjs(base, "a"), await raw_sockjs(base, "b")
        for attempt in (raw_sockjs(base, "c"),
                        client.fetch(base + "/000/x/xhr", method="POST", body=b""),
                        client.fetch(base + "/000/y/xhr_streaming", method="POST", body=b"")):
            with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
                await attempt
            assert refused.value.code == 429
        assert await is_open(a, 0.1) and await is_open(b, 0.1)
        a.write_message(bind_frame("ok-a"))  # bound: out of the budget, room for one more
        assert await is_open(a)
        c = await raw_sockjs(base, "c")
        assert conn_class.gate.open == 3
        for ws in (a, b, c):
            ws.close()
    finally:
        client.close()
        server.stop()


@pytest.mark.gen_test(timeout=30)
async def test_an_unbound_connection_is_closed_after_its_deadline(monkeypatch):
    monkeypatch.setattr(connection, "UNBOUND_DEADLINE", 0.5)
    app = tornado.web.Application(terminal.sockjs_urls(FakeSessions()))
    server = tornado.httpserver.HTTPServer(app)
    [port] = free_ports(1)
    server.listen(port, "127.0.0.1")
    base = "http://127.0.0.1:%d%s" % (port, transport.PREFIX)
    try:
        idle, bound = await raw_sockjs(base, "idle"), await raw_sockjs(base, "bound")
        bound.write_message(bind_frame("ok"))
        assert await closing_frame(idle) == [2, connection.NO_BIND]
        assert await is_open(bound, 0.7)
        bound.close()
    finally:
        server.stop()
