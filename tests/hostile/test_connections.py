"""Connections are bounded: slow headers, idle keep-alive and floods are closed by the server,
beyond --max-connections a client is refused at once, and streams that are meant to last (an
xhr-streaming terminal, a websocket) outlive the idle timeout. The gateway under test
(conftest.strict_gateway) has --header-timeout 2s, --idle-timeout 4s, --max-connections 700; the
refusal at the limit is tested on a gateway of 100 (crowded_gateway)."""

import re
import select
import socket
import time

import pytest
import tornado.websocket

from tests.hostile.conftest import raw_socket, rss_kib
from tests.support.gateway import Gateway
from tests.support.probe import Probe

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


def closed_by_peer(sock):
    """Whether the server has closed ``sock`` (readable with nothing to read, or reset)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(65536) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True


def open_sockets(gw, count):
    out = []
    for _ in range(count):
        sock = raw_socket(gw)
        sock.setblocking(False)
        out.append(sock)
    return out


def close_all(socks):
    for sock in socks:
        sock.close()


def connections_metric(gw, reason):
    text = gw.get("/metrics").data.decode()
    m = re.search(r'^dashboard_http_connections_closed_total\{reason="%s"\} (\S+)$' % reason,
                  text, re.M)
    return float(m.group(1))


def test_slow_headers_are_closed_by_the_server(strict_gateway, admin_token):
    """300 connections each sending a header byte every 0.5 s (faster than any per-read
    timeout) are all closed once the 2 s header deadline has passed; the probe keeps
    answering throughout."""
    gw = strict_gateway
    before = connections_metric(gw, "header-timeout")
    socks = open_sockets(gw, 300)
    header = b"GET /api/v1/namespace HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
    started = time.monotonic()
    sent = 0
    try:
        with Probe(gw, admin_token) as probe:
            open_ = list(socks)
            while open_ and time.monotonic() - started < 8:
                for sock in open_:
                    try:
                        sock.send(header[sent:sent + 1])
                    except (BlockingIOError, ConnectionResetError, BrokenPipeError):
                        pass
                sent += 1
                time.sleep(0.5)
                open_ = [s for s in open_ if not closed_by_peer(s)]
            took = time.monotonic() - started
        assert not open_, "%d of 300 slow connections still open after %.1f s" % (
            len(open_), took)
        assert took < 4.5, "closed only after %.1f s (header timeout 2 s)" % took
        # /healthz is the gateway's alone; this gateway's list is the API server's LIST too
        # (--watch-cache=false), on a machine the suite loads (a 1.04 s list once failed a
        # bound of 1 s there while /healthz held)
        probe.assert_responsive(1.0, list_seconds=2.0)
    finally:
        close_all(socks)
    assert connections_metric(gw, "header-timeout") - before >= 300


def test_an_idle_keep_alive_connection_lasts_the_idle_timeout_not_more(strict_gateway):
    sock = raw_socket(strict_gateway)
    try:
        sock.sendall(REQUEST)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        sock.setblocking(False)
        time.sleep(3)   # longer than the header timeout: idle is not slow
        assert not closed_by_peer(sock)
        sock.setblocking(True)
        sock.sendall(REQUEST)   # and it still serves
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        idle_since = time.monotonic()
        sock.setblocking(False)
        while not closed_by_peer(sock) and time.monotonic() - idle_since < 10:
            time.sleep(0.2)
        assert closed_by_peer(sock)
        # 4 s of idleness, plus the sweep's 0.5 s and room for a loaded machine
        assert 3.5 < time.monotonic() - idle_since < 6.5
    finally:
        sock.close()


def test_long_lived_streams_outlive_the_idle_timeout(strict_gateway):
    """An xhr-streaming SockJS session and a websocket stay open past the 4 s idle timeout.
    What ends these unbound sessions is the terminal's own bind deadline (5 s, a SockJS close
    frame saying so), never the connection sweep: each is watched until it ends (at most 8 s)
    and must have lasted beyond the idle timeout and ended with that frame, or not at all."""
    import asyncio

    host, port = strict_gateway.url.split("//")[1].split(":")

    async def watch(read):
        """(seconds it stayed open, what arrived) for a connection read by ``read``."""
        opened, received = time.monotonic(), []
        try:
            while time.monotonic() - opened < 8:
                chunk = await asyncio.wait_for(read(), 8 - (time.monotonic() - opened))
                if not chunk:
                    break
                received.append(chunk if isinstance(chunk, str) else chunk.decode())
        except (asyncio.TimeoutError, tornado.websocket.WebSocketClosedError):
            pass
        return time.monotonic() - opened, "".join(received)

    async def stream():
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /api/sockjs/000/longlived/xhr_streaming HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 0\r\n\r\n")
        first = await reader.read(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first[:200]
        try:
            return await watch(lambda: reader.read(65536))
        finally:
            writer.close()

    async def websocket():
        url = strict_gateway.url.replace("http", "ws") + "/api/sockjs/000/longws/websocket"
        ws = await tornado.websocket.websocket_connect(url)
        assert await ws.read_message() == "o"
        try:
            return await watch(ws.read_message)
        finally:
            ws.close()

    async def both():
        return await asyncio.gather(stream(), websocket())

    for lasted, received in asyncio.run(both()):
        assert lasted > 4.5, "closed after %.1f s: %r" % (lasted, received[-200:])
        if lasted < 7.9:
            assert "no terminal session bound" in received, received[-200:]


@pytest.fixture(scope="module")
def crowded_gateway(cluster, open_file_limit):
    """At most 100 connections, headers due within 6 s: 100 sockets open well inside the
    listen backlog and long before the first is due, however loaded the machine (with 700
    and 2 s, a slow run had the first ones closed, and a slot free, before the last opened)."""
    gw = Gateway.start(cluster, "--watch-cache=false", "--header-timeout", "6s",
                       "--idle-timeout", "6s", "--max-connections", "100")
    yield gw
    gw.stop()


def test_beyond_max_connections_a_client_is_refused_at_once(crowded_gateway):
    """100 connections held (silent): the next is answered 503 without waiting; once the
    server has closed the silent ones (header timeout), new clients are served again."""
    gw = crowded_gateway
    opened = time.monotonic()
    socks = open_sockets(gw, 100)
    try:
        started = time.monotonic()
        assert started - opened < 3, "opening 100 sockets took %.1f s" % (started - opened)
        extra = raw_socket(gw)
        try:
            extra.sendall(REQUEST)
            answer = extra.recv(65536)
        except ConnectionResetError:
            answer = b""
        finally:
            extra.close()
        assert answer.startswith(b"HTTP/1.1 503 ") or answer == b"", answer[:200]
        assert time.monotonic() - started < 1.0
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline:
            if all(closed_by_peer(s) for s in socks):
                break
            time.sleep(0.2)
        assert all(closed_by_peer(s) for s in socks)
    finally:
        close_all(socks)
    assert gw.get("/healthz").status == 200
    assert connections_metric(gw, "limit") >= 1


def test_a_flood_of_silent_connections_does_not_stop_the_gateway(strict_gateway, admin_token):
    """600 connections opened at once and never used: the probe keeps answering, the server
    closes them all by itself."""
    gw = strict_gateway
    before = rss_kib(gw.proc.pid)
    with Probe(gw, admin_token) as probe:
        socks = open_sockets(gw, 600)
        try:
            time.sleep(1.0)
            deadline = time.monotonic() + 8
            while time.monotonic() < deadline and not all(closed_by_peer(s) for s in socks):
                time.sleep(0.2)
            assert all(closed_by_peer(s) for s in socks)
        finally:
            close_all(socks)
    # Accepting and then closing 600 connections is the loop's own work: on a shared 2-core
    # machine a probe may wait behind it for about a second (1.04-1.07 s seen in loaded runs,
    # the test process itself on time). A gateway that stopped serving would refuse the probe
    # or let it time out (5 s).
    probe.assert_responsive(2.0)
    assert rss_kib(gw.proc.pid) - before < 30 * 1024


def test_the_connection_flags_have_safe_defaults():
    from dashboard_api.app.options import parse
    opts = parse([])
    assert (opts.header_timeout, opts.idle_timeout, opts.body_timeout, opts.max_connections) \
        == (10.0, 60.0, 60.0, 2048)
    opts = parse(["--header-timeout", "2s", "--idle-timeout", "1m", "--body-timeout", "500ms",
                  "--max-connections", "10"])
    assert (opts.header_timeout, opts.idle_timeout, opts.body_timeout, opts.max_connections) \
        == (2.0, 60.0, 0.5, 10)
