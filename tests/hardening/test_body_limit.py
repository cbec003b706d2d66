"""One maximum body size for the whole gateway (--max-body-size), refused with 413 and the JSON
error before the body is read."""

import json
import signal
import socket
import time

import pytest

from tests.gateway.helpers import assert_error

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def small_limit(cluster):
    from tests.support.gateway import Gateway
    gw = Gateway.start(cluster, "--max-body-size", "64Ki")
    yield gw
    gw.stop()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def raw_exchange(url, head, body_chunks, read_timeout=10):
    """Sends a request by hand (so nothing buffers or retries it); returns the raw answer."""
    host, port = url.split("//")[1].split(":")
    sock = socket.create_connection((host, int(port)), timeout=read_timeout)
    try:
        sock.sendall(head)
        sent = 0
        try:
            for chunk in body_chunks:
                sock.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the gateway closed the connection after answering: what we want
        data = b""
        try:
            while True:
                got = sock.recv(65536)
                if not got:
                    break
                data += got
        except ConnectionResetError:
            pass
        return data, sent
    finally:
        sock.close()


def test_a_declared_oversized_body_is_413_on_every_kind_of_route(small_limit, admin_token):
    body = b"x" * (LIMIT + 1)
    for method, path in [("POST", "/api/v1/appdeploymentfromfile"),
                         ("PUT", "/api/v1/settings/global"),
                         ("POST", "/api/v1/login"), ("GET", "/api/v1/pod"),
                         ("POST", "/no/such/path")]:
        reply = small_limit.request(method, path, token=admin_token, raw_body=body,
                                    headers={"Content-Type": "application/json"})
        body_ = assert_error(reply, 413, "RequestEntityTooLarge", ["limit is 65536 bytes"])
        assert reply.headers["Content-Type"].startswith("application/json"), body_


def test_a_body_at_the_limit_passes(small_limit, admin_token):
    # A settings body of exactly LIMIT bytes reaches the handler (it is then refused on its
    # own merits, not for its size).
    text = json.dumps({"clusterName": "x" * (LIMIT - 20)})
    text += " " * (LIMIT - len(text))
    reply = small_limit.request("POST", "/api/v1/appdeployment/validate/name",
                                token=admin_token, raw_body=text.encode(),
                                headers={"Content-Type": "application/json"})
    assert reply.status != 413, reply


def test_a_50_mb_upload_is_refused_without_being_read(small_limit, admin_token):
    """The answer comes as soon as the headers are in, and the gateway's memory does not grow
    by the body: it never buffers it (Tornado alone would read all 50 MB first)."""
    before = rss_kib(small_limit.proc.pid)
    size = 50 * 1024 * 1024
    head = ("POST /api/v1/appdeploymentfromfile HTTP/1.1\r\nHost: x\r\n"
            "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % (admin_token, size)).encode()
    started = time.monotonic()
    chunk = b"x" * (1024 * 1024)
    data, sent = raw_exchange(small_limit.url, head, (chunk for _ in range(50)))
    assert data.startswith(b"HTTP/1.1 413 "), data[:200]
    assert b'"reason":"RequestEntityTooLarge"' in data
    assert sent < size, "the gateway read the whole body"
    assert time.monotonic() - started < 10
    assert rss_kib(small_limit.proc.pid) - before < 20 * 1024


def send_chunked_past_the_limit(gw, token):
    """A chunked PUT of 50 MiB; returns (the raw answer, bytes sent)."""
    head = ("PUT /api/v1/settings/global HTTP/1.1\r\nHost: x\r\n"
            "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n" % token).encode()
    piece = b"x" * (256 * 1024)
    framed = b"%x\r\n%s\r\n" % (len(piece), piece)
    data, sent = raw_exchange(gw.url, head, (framed for _ in range(200)))
    return data, sent, 200 * len(framed)


def test_a_chunked_body_is_cut_off_at_the_limit(small_limit, admin_token):
    """No Content-Length: the body is counted as it arrives and refused once past the limit."""
    before = rss_kib(small_limit.proc.pid)
    data, sent, whole = send_chunked_past_the_limit(small_limit, admin_token)
    assert data.startswith(b"HTTP/1.1 413 "), data[:200]
    assert sent < whole, "the gateway read the whole chunked body"
    assert rss_kib(small_limit.proc.pid) - before < 20 * 1024


def test_a_cut_off_body_is_not_left_in_flight(cluster, admin_token):
    """The request cut off is over: a SIGTERM then stops the gateway at once, rather than
    waiting out --grace-period for a request that never finishes (it did: 25 s)."""
    from tests.support.gateway import Gateway
    gw = Gateway.start(cluster, "--max-body-size", "64Ki", "--grace-period", "20s")
    try:
        data, _, _ = send_chunked_past_the_limit(gw, admin_token)
        assert data.startswith(b"HTTP/1.1 413 "), data[:200]
        gw.proc.send_signal(signal.SIGTERM)
        gw.proc.wait(8)
        assert "unfinished" not in gw.log(whole=True)
    finally:
        gw.stop()


def test_the_default_limit_fits_a_deploy_file_of_a_few_mib(gateway, admin_token, namespace):
    """4 MiB by default: a 3 MiB file is read (and judged on its content), 5 MiB is not."""
    big = "x" * (3 * 1024 * 1024)
    doc = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "big", "namespace": namespace},
                      "data": {"k": big[:900 * 1024]}})
    padded = doc + "\n#" + big
    reply = gateway.request("POST", "/api/v1/appdeploymentfromfile", token=admin_token,
                            csrf="appdeploymentfromfile",
                            body={"name": "f", "namespace": namespace, "content": padded})
    assert reply.status != 413, reply
    over = gateway.request("POST", "/api/v1/appdeploymentfromfile", token=admin_token,
                           raw_body=b"x" * (5 * 1024 * 1024 + 1),
                           headers={"Content-Type": "application/json"})
    assert_error(over, 413, "RequestEntityTooLarge")


def test_the_flag_takes_units():
    from dashboard_api.app.options import parse
    assert parse(["--max-body-size", "512Ki"]).max_body_size == 512 * 1024
    assert parse([]).max_body_size == 4 * 1024 * 1024
    with pytest.raises(SystemExit):
        parse(["--max-body-size", "0"])


def test_the_terminal_send_paths_are_bounded(small_limit):
    """SockJS input: xhr_send is a body like any other; a websocket frame over the limit ends
    the connection (Tornado sends 1009, message too big, and aborts, so the client may see
    the close without its code) instead of being buffered."""
    import asyncio

    import tornado.websocket

    opened = small_limit.request("POST", "/api/sockjs/000/bounded/xhr")
    assert opened.status == 200 and opened.data == b"o\n"
    big = json.dumps(["x" * LIMIT]).encode()
    assert_error(small_limit.request("POST", "/api/sockjs/000/bounded/xhr_send", raw_body=big,
                                     headers={"Content-Type": "text/plain"}),
                 413, "RequestEntityTooLarge")
    owner = opened.headers["Set-Cookie"].split(";")[0]  # the session's opener (issue 18)
    small = small_limit.request("POST", "/api/sockjs/000/bounded/xhr_send",
                                raw_body=b'["x"]', headers={"Content-Type": "text/plain",
                                                            "Cookie": owner})
    assert small.status == 204, small

    async def websocket():
        url = small_limit.url.replace("http", "ws") + "/api/sockjs/000/bounded2/websocket"
        ws = await tornado.websocket.websocket_connect(url)
        assert await ws.read_message() == "o"
        ws.write_message(json.dumps(["x" * 10]))
        ws.write_message(json.dumps(["x" * LIMIT]))
        for _ in range(10):   # bounded: the close arrives after a few frames at most
            if await asyncio.wait_for(ws.read_message(), 10) is None:
                return "closed"
        return "still open"

    assert asyncio.run(websocket()) == "closed"
