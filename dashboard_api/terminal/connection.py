"""The SockJS connection of a terminal: the first frame binds it, later frames feed it.

Every open connection holds a socket, and heartbeats keep an idle one open forever. Anyone may
open one (the shell id that proves a right to a shell comes only with the first frame), so
connections that have not bound a shell id yet are kept apart from the bound ones:

* an unbound connection is closed (code 2) when it has bound nothing ``UNBOUND_DEADLINE``
  seconds after opening (a browser binds within milliseconds of the open);
* at most ``UNBOUND_PER_CLIENT`` unbound connections of one client address are open at once
  (the peer, or the forwarded address when the peer is one of --trusted-proxies: see
  proxies.py): a client at its budget gets 429 before its request becomes a SockJS
  connection (transport.py asks ``Gate.client_full``), the cheapest answer there is;
* at most ``UNBOUND_LIMIT`` unbound connections are open at once in all: at that budget the
  OLDEST unbound connection is closed to make room, so that a flood from many addresses only
  ever evicts itself, while a browser's connection, which binds at once, gets its turn;
* one endpoint keeps at most a fixed number of connections open in all, bound or not (see
  ``connection_class``); when they are all bound, new ones are refused.
"""

import asyncio
import collections
import logging
import resource

import tornado.websocket

from dashboard_api.serving import proxies as proxies_mod
from dashboard_api.terminal import protocol
from dashboard_api.terminal.sessions import BindRefused, fingerprint
from dashboard_api.terminal.transport import SockJSConnection

log = logging.getLogger("dashboard_api.terminal")

# Open SockJS connections of one endpoint, bound or not; fewer when descriptors are scarce.
MAX_CONNECTIONS = 1000
# Connections that have not bound a shell id yet: in all, per client address, and how long.
UNBOUND_LIMIT = 64
UNBOUND_PER_CLIENT = 8
UNBOUND_DEADLINE = 5

UNKNOWN_SESSION = "unknown or expired terminal session"
NO_BIND = "no terminal session bound within %d seconds" % UNBOUND_DEADLINE
BUSY = "too many terminal connections open; try again later"
EVICTED = "too many terminal connections waiting for a session; closed to make room"


def default_limit():
    """MAX_CONNECTIONS, or a quarter of the descriptors the process may open when that is
    less: a terminal holds two (browser side and exec stream), and the rest of the gateway
    needs its own."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, soft // 4))


class Gate:
    """Counts open connections up to a limit; warns once each time the limit is reached.

    Unbound connections are also tracked in opening order, in all and per client, so that a
    budget reached evicts the oldest one rather than refusing the newcomer."""

    def __init__(self, limit, unbound_limit=None, per_client=UNBOUND_PER_CLIENT):
        self.limit = limit
        self.unbound_limit = max(1, min(limit, UNBOUND_LIMIT if unbound_limit is None
                                        else unbound_limit))
        self.per_client = max(1, per_client)
        self.open = 0
        self._full = False
        self.unbound = collections.OrderedDict()  # connection -> client, oldest first
        self._of_client = collections.defaultdict(collections.OrderedDict)
        self.evicted = 0

    def enter(self):
        if self.open >= self.limit:
            if not self._full:
                log.warning("%d terminal connections open: refusing more", self.open)
            self._full = True
            return False
        self.open += 1
        return True

    def leave(self):
        self.open -= 1
        self._full = False

    def client_full(self, client):
        """Whether `client` already holds its budget of unbound connections."""
        mine = self._of_client.get(client)
        return mine is not None and len(mine) >= self.per_client

    def admit_unbound(self, conn, client):
        """Counts `conn` (unbound, from `client`) in; returns False when there is no room even
        after evicting the oldest unbound connections (every connection is bound)."""
        mine = self._of_client[client]
        if len(mine) >= self.per_client:
            self._evict(next(iter(mine)))
        if len(self.unbound) >= self.unbound_limit:
            self._evict(next(iter(self.unbound)))
        if self.open >= self.limit and self.unbound:
            self._evict(next(iter(self.unbound)))
        if not self.enter():
            if not mine:
                del self._of_client[client]
            return False
        self.unbound[conn] = client
        mine[conn] = True
        return True

    def bound(self, conn):
        """`conn` bound a shell id: out of the unbound budgets (it stays counted in all)."""
        client = self.unbound.pop(conn, None)
        if client is not None:
            mine = self._of_client[client]
            mine.pop(conn, None)
            if not mine:
                del self._of_client[client]

    def _evict(self, conn):
        self.bound(conn)  # out of the budgets at once; its close follows
        self.evicted += 1
        if self.evicted == 1 or self.evicted % 1000 == 0:
            log.warning("unbound terminal connections over budget: closing the oldest "
                        "(%d so far)", self.evicted)
        conn.end(2, EVICTED)


def connection_class(sessions=None, limit=None, proxies=None, unbound_limit=None,
                     per_client=UNBOUND_PER_CLIENT):
    """The connection class of one SockJS endpoint, with a gate of its own, binding the ids
    of `sessions` (sessions.Sessions, or a function of the connection's path giving its
    cluster's; None binds nothing); `proxies` (proxies.TrustedProxies) says which client a
    connection comes from."""
    gate = Gate(default_limit() if limit is None else limit, unbound_limit, per_client)
    sessions_of = sessions if callable(sessions) else (lambda _path: sessions)
    return type("TerminalConnection", (TerminalConnection,), {
        "gate": gate, "sessions_of": staticmethod(sessions_of),
        "proxies": proxies or proxies_mod.NONE})


class TerminalConnection(SockJSConnection):
    gate = None  # set by connection_class()
    sessions_of = staticmethod(lambda _path: None)  # set by connection_class()
    sessions = None  # those of the connection's cluster, from its path (on_open)
    proxies = proxies_mod.NONE  # set by connection_class()
    terminal = None
    client = ""   # the client's address as far as it can be relied on (--trusted-proxies)
    _entered = False
    _bind_timer = None

    def on_open(self, info):
        # The cluster of the path the connection was opened on: an id binds only there.
        self.sessions = self.sessions_of(info.path)
        client = self.client = self.proxies.client(info.headers, info.ip)
        self._entered = self.gate.admit_unbound(self, client)
        if not self._entered:
            self.end(2, BUSY)
            return
        self._bind_timer = asyncio.get_running_loop().call_later(
            UNBOUND_DEADLINE, self.end, 2, NO_BIND)

    def on_message(self, message):
        frame = protocol.decode(message)
        if self.terminal is None:
            self._bind(frame)
        elif frame is None:
            log.debug("undecodable terminal frame; ending the process")
            self.terminal.stop()
        elif frame.op == protocol.STDIN:
            self.terminal.stdin(frame.data)
        elif frame.op == protocol.RESIZE:
            self.terminal.resize(frame.rows, frame.cols)
        elif frame.op != protocol.BIND:
            log.debug("unexpected terminal frame %r; ending the process", frame.op[:20])
            self.terminal.stop()

    def _bind(self, frame):
        refusal, shown = UNKNOWN_SESSION, "-"
        if frame is not None and frame.op == protocol.BIND and self.sessions is not None:
            shown = fingerprint(frame.session_id)
            try:
                self.terminal = self.sessions.bind(frame.session_id, self)
            except BindRefused as exc:
                refusal = str(exc)
        transport = getattr(self.session.handler, "name", "unknown")
        if self.terminal is None:
            log.info("terminal session %s refused over %s: %s", shown, transport, refusal)
            self.end(2, refusal)
        else:
            log.info("terminal session %s bound over %s", shown, transport)
            self._bind_timer.cancel()
            self.gate.bound(self)

    def on_close(self):
        if self._bind_timer is not None:
            self._bind_timer.cancel()
        if self._entered:
            self._entered = False
            self.gate.bound(self)
            self.gate.leave()
        if self.terminal is not None:
            self.terminal.stop()

    # --- what the terminal uses ------------------------------------------------------------

    def write(self, text):
        try:
            self.send(text)
        except tornado.websocket.WebSocketClosedError:
            pass  # the browser is gone; on_close follows

    async def drained(self):
        await self.session.drained()

    def end(self, code, reason):
        if not self.is_closed:
            self.session.close(code, reason)
