"""Attack: anonymous SockJS connections held open to deny shells to signed-in users.

Before: 1,000 anonymous websocket connections filled the endpoint's connection limit and a
legitimate shell was refused ("too many terminal connections open"). Now connections that have
not bound a shell id have budgets of their own: per client address (beyond it, 429 before any
connection is made) and in all (beyond it the oldest is closed to make room), and a deadline
of a few seconds; a browser's connection, which binds at once, gets in and works. The client
address is the peer's unless the peer is one of --trusted-proxies (then the forwarded
address): tested behind nginx, with and without the flag, and with forged X-Forwarded-For
headers sent straight to the gateway.

The flood comes from 127.0.0.2 (another loopback address: another client), the shell from
127.0.0.1. The test raises its open-file limit (within the hard limit) before starting the
gateway, which inherits it.
"""

import asyncio
import base64
import multiprocessing
import os
import resource
import secrets
import time

import pytest
import urllib3

from dashboard_api.terminal import connection
from tests.support.gateway import Gateway
from tests.support.nginx import Nginx
from tests.support.probe import Probe
from tests.terminal.conftest import CONTAINER, create_pods
from tests.terminal.jsclient import JsClient, new_session, sockjs_url

FLOOD = 1000
ATTACKER = "127.0.0.2"
PER_CLIENT = connection.UNBOUND_PER_CLIENT
# The flood opens connections at this rate, and opens a closed one again after a pause: it
# goes on all along, but a storm of new connections (a connection-rate attack, which costs a
# few milliseconds of the event loop per connection whatever is done with it) is the business
# of the connection limits, not of this test.
RATE = 150
RETRY_SECONDS = 3.0


@pytest.fixture(scope="module")
def more_files():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= 3 * FLOOD, \
        "the flood test needs %d open files (hard limit %s)" % (3 * FLOOD, hard)
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture(scope="module")
def shell_namespace(cluster):
    namespace = cluster.new_namespace("hostile-term")
    create_pods(cluster, namespace, {"web": "nginx:1.19"})
    yield namespace
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


class Flood:
    """FLOOD slots of anonymous SockJS websocket connections from ATTACKER, attempts paced at
    RATE: a refused attempt is made again at once, a connection the gateway closes is opened
    again RETRY_SECONDS later, until stopped. An asyncio loop in a process of its own (in
    this one it would take the interpreter lock from the probe's threads and slow the probe,
    not the gateway)."""

    def __init__(self, port, count=FLOOD):
        ctx = multiprocessing.get_context("spawn")
        self.counters = ctx.Array("i", 4)  # opened (101), failed, open now, refused (429)
        self._stop = ctx.Event()
        self._proc = ctx.Process(target=run_flood, args=(port, count, self.counters,
                                                         self._stop), daemon=True)

    opened = property(lambda self: self.counters[0])
    failed = property(lambda self: self.counters[1])
    open_now = property(lambda self: self.counters[2])
    refused = property(lambda self: self.counters[3])
    attempts = property(lambda self: self.opened + self.refused)

    def __enter__(self):
        self._proc.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._proc.join(30)
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join(5)
        return False


def run_flood(port, count, counters, stop):
    """The flood's process."""
    next_start = [0.0]

    async def paced():
        now = time.monotonic()
        start = next_start[0] = max(now, next_start[0]) + 1.0 / RATE
        await asyncio.sleep(start - now)

    async def slot(i, connecting):
        while not stop.is_set():
            writer = None
            try:
                await paced()
                async with connecting:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(
                        "127.0.0.1", port, local_addr=(ATTACKER, 0)), 5)
                    key = base64.b64encode(os.urandom(16)).decode()
                    writer.write((
                        "GET /api/sockjs/%03d/flood%d%s/websocket HTTP/1.1\r\n"
                        "Host: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                        % (i % 1000, i, secrets.token_hex(4), port, key)).encode())
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
                if not head.startswith(b"HTTP/1.1 101"):
                    counters[3 if head.startswith(b"HTTP/1.1 429") else 1] += 1
                    continue
                counters[0] += 1
                counters[2] += 1
                try:
                    while not stop.is_set():  # hold it until the gateway ends it
                        try:
                            if not await asyncio.wait_for(reader.read(4096), 0.5):
                                break
                        except asyncio.TimeoutError:
                            pass
                finally:
                    counters[2] -= 1
                await asyncio.sleep(RETRY_SECONDS)  # and comes back a little later
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                counters[1] += 1
                await asyncio.sleep(0.2)
            finally:
                if writer is not None:
                    writer.close()

    async def main():
        connecting = asyncio.Semaphore(64)  # within the listen backlog
        await asyncio.gather(*(slot(i, connecting) for i in range(count)))

    asyncio.run(main())


def test_a_flood_of_anonymous_connections_does_not_deny_shells(cluster, more_files,
                                                                 admin_token, shell_namespace):
    gw = Gateway.start(cluster, "--watch-cache=false")
    js = JsClient()
    try:
        started = time.monotonic()
        with Probe(gw, admin_token) as probe, Flood(gw.port) as flood:
            deadline = time.monotonic() + 30
            while flood.attempts < FLOOD and time.monotonic() < deadline:
                time.sleep(0.1)
            flood_seconds = time.monotonic() - started
            assert flood.attempts >= FLOOD, (flood.opened, flood.refused, flood.failed)
            # At most a budget's worth open at once; each lives UNBOUND_DEADLINE seconds.
            waves = 2 + int(flood_seconds / connection.UNBOUND_DEADLINE)
            assert flood.opened <= waves * PER_CLIENT, (flood.opened, flood_seconds)
            # The flood goes on; a signed-in user opens a shell and uses it.
            session_id = new_session(gw, admin_token, shell_namespace, "web", CONTAINER)
            opened = time.monotonic()
            conn = js.open("t", sockjs_url(gw, session_id), bind=session_id,
                           transports=["websocket"])
            js.stdin("t", "echo alive-$((6*7))\r")
            js.wait_output("t", "alive-42", timeout=15)
            shell_seconds = time.monotonic() - opened
            assert conn.closed is None
            still_open = flood.open_now
        probe.assert_responsive(max_seconds=1.0)
        print("\nflood: %d connection attempts in %.1f s: %d refused (429), %d opened, %d "
              "still open at the end; shell answered in %.2f s; worst probe %.2f s (healthz) "
              "%.2f s (list)" % (flood.attempts, flood_seconds, flood.refused, flood.opened,
                                 still_open, shell_seconds, probe.worst(),
                                 probe.worst("list")))
        js.stdin("t", "exit\r")
        assert js.wait_closed("t") == (1, "Process exited")
    finally:
        js.stop()
        gw.stop()


# --- the per-client budget and --trusted-proxies ----------------------------------------------


class Sessions:
    """Opens SockJS xhr sessions (unbound connections) as a given client; tells which are
    still open (an empty xhr_send: 204 open, 404 closed)."""

    def __init__(self, base_url, source=None):
        kw = {"source_address": (source, 0)} if source else {}
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(5, 5), **kw)
        self.base_url = base_url

    def open(self, forwarded_for=None):
        """(path, cookie) of a new session, or None when refused with 429."""
        path = "/api/sockjs/000/%s/" % secrets.token_hex(8)
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        reply = self.http.request("POST", self.base_url + path + "xhr", headers=headers)
        if reply.status == 429:
            return None
        assert reply.status == 200 and reply.data == b"o\n", reply.data
        return path, reply.headers["Set-Cookie"].split(";")[0]

    def is_open(self, session):
        path, cookie = session
        status = self.http.request("POST", self.base_url + path + "xhr_send", body=b"[]",
                                   headers={"Cookie": cookie}).status
        assert status in (204, 404), status
        return status == 204


def opened_by(sessions, client, count):
    return [sessions.open(client) for _ in range(count)]


@pytest.mark.parametrize("trusted", [True, False])
def test_the_per_client_budget_behind_a_proxy(cluster, trusted):
    args = ("--trusted-proxies", "127.0.0.1/32") if trusted else ()
    gw = Gateway.start(cluster, "--watch-cache=false", *args)
    proxy = Nginx.start(["127.0.0.1:%d" % gw.port])
    try:
        with Probe(gw) as probe:
            via = Sessions(proxy.url)
            first = opened_by(via, "203.0.113.1", PER_CLIENT)
            assert None not in first
            others = opened_by(via, "203.0.113.2", 2)
            if trusted:  # two clients: the second has a budget of its own
                assert None not in others
                assert via.open("203.0.113.1") is None  # the first is at its budget
            else:  # one client (the proxy's address): at its budget
                assert others == [None, None]
            assert all(via.is_open(s) for s in first)  # nothing was evicted
        probe.assert_responsive(max_seconds=1.0)
    finally:
        proxy.stop()
        gw.stop()


def test_forwarded_headers_from_untrusted_peers_are_ignored(cluster):
    # 127.0.0.1 is the trusted proxy; a client at 127.0.0.2 sends X-Forwarded-For itself.
    gw = Gateway.start(cluster, "--watch-cache=false", "--trusted-proxies", "127.0.0.1",
                       "-v", "debug")  # terminal requests are logged at debug
    try:
        direct = Sessions(gw.url, source=ATTACKER)
        forged = [direct.open("198.51.100.%d" % n) for n in range(PER_CLIENT + 1)]
        # One client whatever the headers say: the last one is over its budget.
        assert None not in forged[:-1] and forged[-1] is None
        # The log still shows the address the request claims, as the specification says.
        assert "request from 198.51.100.3" in gw.log(whole=True)
    finally:
        gw.stop()


def test_trusted_proxies_flag_is_checked(cluster):
    from dashboard_api.app import options
    assert [str(n) for n in options.parse(["--trusted-proxies", "10.0.0.0/8, ::1"])
            .trusted_proxies] == ["10.0.0.0/8", "::1/128"]
    assert options.parse([]).trusted_proxies == ()
    with pytest.raises(SystemExit):
        options.parse(["--trusted-proxies", "not-an-address"])
