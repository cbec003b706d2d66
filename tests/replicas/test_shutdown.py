"""One replica's probes and its way of going away (addressed directly, as a kubelet does)."""

import signal
import socket
import time

from dashboard_api.serving.lifecycle import Lifecycle
from tests.cluster import devcluster
from tests.support.gateway import Gateway


def wait_ready(gw, timeout=30):
    deadline = time.monotonic() + timeout
    while gw.get("/readyz").status != 200:
        assert time.monotonic() < deadline, gw.log()
        time.sleep(0.1)


def test_sigterm_says_not_ready_at_once_drains_then_exits(cluster, admin_token):
    gw = Gateway.start(cluster, "--drain-period", "2s", "--grace-period", "6s")
    try:
        wait_ready(gw)
        health, ready = gw.get("/healthz"), gw.get("/readyz")  # no token
        assert (health.status, health.data, ready.data) == (200, b"ok\n", b"ok\n")
        assert health.headers["Content-Type"].startswith("text/plain")
        signalled = time.monotonic()
        gw.proc.send_signal(signal.SIGTERM)
        deadline = signalled + 1
        while gw.get("/readyz").status != 503:
            assert time.monotonic() < deadline, "/readyz still 200 a second after SIGTERM"
            time.sleep(0.02)
        assert gw.get("/readyz").data == b"shutting down\n"
        # Still serving while the endpoints update.
        assert gw.get("/healthz").status == 200
        assert gw.get("/api/v1/namespace", token=admin_token).status == 200
        assert gw.proc.wait(10) == 0
        took = time.monotonic() - signalled
        assert 2 <= took < 6, took
        log = gw.log(whole=True)
        assert "stopping (SIGTERM)" in log
        assert "/healthz" not in log and "/readyz" not in log  # probes: debug only
    finally:
        gw.stop()


def test_sigint_skips_the_drain_period(cluster):
    gw = Gateway.start(cluster, "--drain-period", "20s")
    try:
        wait_ready(gw)
        signalled = time.monotonic()
        gw.proc.send_signal(signal.SIGINT)
        assert gw.proc.wait(10) == 0
        assert time.monotonic() - signalled < 5
        assert "Traceback" not in gw.log(whole=True)
    finally:
        gw.stop()


def test_a_request_in_flight_is_finished_after_the_signal(cluster):
    gw = Gateway.start(cluster, "--grace-period", "8s")
    sock = None
    try:
        wait_ready(gw)
        body = b'{"reference": "nginx:1.19"}'
        sock = socket.create_connection(("127.0.0.1", gw.port), timeout=10)
        # Headers and half the body: the request is in flight, waiting for the rest.
        sock.sendall(b"POST /api/v1/appdeployment/validate/imagereference HTTP/1.1\r\n"
                     b"Host: gateway\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:10])
        time.sleep(0.5)
        gw.proc.send_signal(signal.SIGINT)  # no drain period: it stops listening at once
        deadline = time.monotonic() + 5
        while True:
            try:
                socket.create_connection(("127.0.0.1", gw.port), timeout=1).close()
            except ConnectionRefusedError:
                break
            assert time.monotonic() < deadline, "still listening after SIGINT"
            time.sleep(0.05)
        time.sleep(0.5)
        assert gw.proc.poll() is None  # waiting for the request in flight
        sock.sendall(body[10:])
        reply = b""
        while b'"valid"' not in reply:
            chunk = sock.recv(65536)
            assert chunk, reply
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200 "), reply
        assert gw.proc.wait(10) == 0
    finally:
        if sock is not None:
            sock.close()
        gw.stop()


class Cache:
    def __init__(self):
        self.done = False

    def settled(self):
        return self.done


def test_ready_once_the_cache_synced_and_until_stopping():
    cache = Cache()
    lifecycle = Lifecycle(cache)
    cache.done = True  # the kinds registered so far have synced, but start() goes on
    assert lifecycle.ready() == (False, "the watch cache is starting")
    lifecycle.cache_started = True
    cache.done = False
    assert lifecycle.ready() == (False, "the watch cache is syncing")
    cache.done = True
    assert lifecycle.ready() == (True, "ok")
    cache.done = False  # a later re-list (a new custom kind): still ready
    assert lifecycle.ready() == (True, "ok")
    lifecycle.stopping = True
    assert lifecycle.ready() == (False, "shutting down")
    assert Lifecycle(None).ready() == (True, "ok")  # no cache: ready once serving


def test_dev_cluster_raises_one_interrupt_only(monkeypatch):
    """Ctrl-C on bin/dashboard: SIGINT, then the launcher's SIGTERM during the cluster's stop,
    which must not cut the stop short with a KeyboardInterrupt traceback."""
    monkeypatch.setattr(devcluster, "_interrupted", False)
    try:
        devcluster._interrupt(signal.SIGINT, None)
        raise AssertionError("the first signal must interrupt")
    except KeyboardInterrupt:
        pass
    assert devcluster._interrupt(signal.SIGTERM, None) is None
