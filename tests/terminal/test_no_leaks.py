"""Terminals cost no thread each, and leave nothing open behind them: measured on a gateway
process of its own (its /proc entries), through the real client, API server and simulator."""

import os

import pytest

from tests.support.gateway import Gateway
from tests.support.waiting import wait_for
from tests.terminal.jsclient import new_session, sockjs_url

TRANSPORTS = ["websocket", "xhr-streaming", "xhr-polling"]
POOL_SLACK = 3   # sockets opened meanwhile that may stay: API server connections kept pooled


@pytest.fixture(scope="module")
def own_gateway(cluster):
    gw = Gateway.start(cluster)
    gw.wait_cache_synced()  # its watches are open before the sockets are counted
    yield gw
    gw.stop()


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def tcp_sockets(pid):
    """{inode: (local port, remote port)} of the process's TCP sockets (remote 0: listening)."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = {}
    for table in ("tcp", "tcp6"):
        try:
            with open("/proc/%d/net/%s" % (pid, table)) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if cols[9] in inodes:
                found[cols[9]] = (int(cols[1].split(":")[1], 16), int(cols[2].split(":")[1], 16))
    return found


def describe(sockets, gateway_port):
    """Sockets by peer, for a failure message."""
    peers = {}
    for local, remote in sockets.values():
        key = ("listening on %d" % local if remote == 0 else
               "browser side" if local == gateway_port else "to port %d" % remote)
        peers[key] = peers.get(key, 0) + 1
    return peers


def threads(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


def test_terminals_take_no_thread_and_leave_no_socket(js, own_gateway, admin_token,
                                                      shell_pods):
    gw, pid, count = own_gateway, own_gateway.proc.pid, 30
    new_session(gw, admin_token, shell_pods, "web")  # the API server pool is in place (unbound)
    fds_before, threads_before = open_fds(pid), threads(pid)
    sockets_before = tcp_sockets(pid)
    names = ["n%d" % n for n in range(count)]
    for n, name in enumerate(names):
        # One after the other, as the web UI does: ids waiting for a bind are limited.
        session_id = new_session(gw, admin_token, shell_pods, "web")
        conn = js.open(name, sockjs_url(gw, session_id), bind=session_id,
                       transports=[TRANSPORTS[n % len(TRANSPORTS)]])
        js.wait(lambda: conn.transport or conn.closed, 15, "%s to open" % name)
        js.stdin(name, "echo up-$((%d+100))\r" % n)
    for n, name in enumerate(names):
        js.wait_output(name, "up-%d" % (n + 100), timeout=60)

    # Each terminal holds sockets (browser side, exec stream), never a thread: what grows is
    # the bounded pools (name resolution, cluster calls), far below one thread a terminal.
    assert open_fds(pid) >= fds_before + count
    assert threads(pid) - threads_before < count // 3, (threads_before, threads(pid))
    # The terminals' sockets: browser side (accepted on the gateway's port) and exec streams
    # (to the API server); a few of the latter may be the API server pool grown meanwhile.
    opened = {inode: peers for inode, peers in tcp_sockets(pid).items()
              if inode not in sockets_before}
    assert len(opened) >= count

    # Half end from the browser, half from the shell.
    for n, name in enumerate(names):
        if n % 2:
            js.close(name)
        else:
            js.stdin(name, "exit\r")
    for name in names:
        js.wait_closed(name, timeout=30)
    # Closing takes the shells' exit, the exec streams' close handshakes and the clients' kept
    # alive connections (closed by the gateway's 60 s idle timeout at the latest): on a loaded
    # machine more than a few seconds, so the wait is the idle timeout and some; a leak of 30
    # terminals' sockets stays a leak however long one waits. What is counted is the sockets
    # the terminals opened, not every fd: the pool of API server connections may keep a few
    # that calls made meanwhile opened (it is bounded, and not a terminal's), and the watches
    # reconnect when they go quiet.
    def left_open():
        now = tcp_sockets(pid)
        return {inode: peers for inode, peers in opened.items() if inode in now}

    other_fds_before = fds_before - len(sockets_before)   # files, pipes, event fds

    def closed():
        left = left_open()
        browser = [p for p in left.values() if p[0] == gw.port]
        others = open_fds(pid) - len(tcp_sockets(pid))
        return not browser and len(left) <= POOL_SLACK and others <= other_fds_before
    try:
        wait_for(closed, 75, 0.2, "the terminals' sockets")
    except TimeoutError:
        pytest.fail("the terminals' sockets did not close: of %d opened, %s are still open "
                    "(fds: %d before, %d now; not TCP: %d before, %d now)"
                    % (len(opened), describe(left_open(), gw.port), fds_before, open_fds(pid),
                       other_fds_before, open_fds(pid) - len(tcp_sockets(pid))))
