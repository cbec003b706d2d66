"""The fault proxy itself, in front of a plain TCP echo server: each mode does what the faults
suite relies on (no cluster needed)."""

import socket
import socketserver
import threading
import time

import pytest

from tests.faults.proxy import FaultProxy


class _Echo(socketserver.BaseRequestHandler):
    def handle(self):
        try:
            while True:
                data = self.request.recv(65536)
                if not data:
                    return
                self.request.sendall(data)
        except OSError:   # reset by the proxy: what some tests do
            pass


@pytest.fixture
def echo_proxy():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    proxy = FaultProxy("127.0.0.1", server.server_address[1]).start()
    yield proxy
    proxy.stop()
    server.shutdown()
    server.server_close()


def connect(proxy, timeout=1.0):
    return socket.create_connection(("127.0.0.1", proxy.port), timeout=timeout)


def echo(sock, data=b"ping"):
    sock.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def test_pass_forwards_both_ways(echo_proxy):
    with connect(echo_proxy) as sock:
        assert echo(sock, b"x" * 200_000) == b"x" * 200_000


def test_refuse_resets_open_connections_and_refuses_new_ones(echo_proxy):
    sock = connect(echo_proxy)
    assert echo(sock) == b"ping"
    echo_proxy.refuse()
    with pytest.raises((ConnectionResetError, BrokenPipeError)):
        sock.sendall(b"ping")
        assert sock.recv(10) == b""   # a reset, not an orderly end
    sock.close()
    with pytest.raises(ConnectionRefusedError):
        connect(echo_proxy)
    echo_proxy.passing()
    with connect(echo_proxy) as again:
        assert echo(again) == b"ping"


def test_hang_accepts_and_answers_nothing(echo_proxy):
    with connect(echo_proxy) as old:
        assert echo(old) == b"ping"
        echo_proxy.hang()
        with connect(echo_proxy, timeout=0.5) as new:      # accepted
            for sock in (old, new):
                sock.sendall(b"ping")
                with pytest.raises(socket.timeout):
                    sock.recv(10)
        echo_proxy.passing()
        with pytest.raises(socket.timeout):   # a connection lost stays lost
            old.recv(10)
    with connect(echo_proxy) as fresh:
        assert echo(fresh) == b"ping"


def test_drop_silences_open_connections_only(echo_proxy):
    with connect(echo_proxy, timeout=0.5) as old:
        assert echo(old) == b"ping"
        echo_proxy.drop()
        old.sendall(b"ping")
        with pytest.raises(socket.timeout):   # no answer, and neither FIN nor RST
            old.recv(10)
        with connect(echo_proxy) as new:
            assert echo(new) == b"ping"


def test_latency_and_trickle_slow_the_answers(echo_proxy):
    echo_proxy.latency(0.2)
    with connect(echo_proxy, timeout=5) as sock:
        start = time.monotonic()
        assert echo(sock) == b"ping"
        assert 0.4 <= time.monotonic() - start < 2.0   # both ways
    echo_proxy.passing()
    echo_proxy.trickle(10, 0.05)
    with connect(echo_proxy, timeout=5) as sock:
        start = time.monotonic()
        assert echo(sock, b"y" * 100) == b"y" * 100
        assert 0.45 <= time.monotonic() - start < 3.0   # 10 pieces, 50 ms apart


def test_stop_closes_everything(echo_proxy):
    sock = connect(echo_proxy)
    assert echo(sock) == b"ping"
    echo_proxy.stop()
    assert sock.recv(10) == b""
    sock.close()
    with pytest.raises(ConnectionRefusedError):
        connect(echo_proxy)
