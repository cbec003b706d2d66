"""The SockJS connection of a terminal: the first frame binds it, later frames feed it.

Every open connection holds a socket, and heartbeats keep an idle one open forever, so a
connection that has bound no session ``BIND_DEADLINE`` seconds after opening is closed (code 2),
and one endpoint keeps at most a fixed number open at once (see ``connection_class``).
"""

import asyncio
import logging
import resource

import tornado.websocket

from dashboard_api.terminal import protocol
from dashboard_api.terminal.sessions import BIND_DEADLINE, BindRefused, fingerprint
from dashboard_api.terminal.transport import SockJSConnection

log = logging.getLogger("dashboard_api.terminal")

# Open SockJS connections of one endpoint, bound or not; fewer when descriptors are scarce.
MAX_CONNECTIONS = 1000

UNKNOWN_SESSION = "unknown or expired terminal session"
NO_BIND = "no terminal session bound within %d seconds" % BIND_DEADLINE
BUSY = "too many terminal connections open; try again later"


def default_limit():
    """MAX_CONNECTIONS, or a quarter of the descriptors the process may open when that is
    less: a terminal holds two (browser side and exec stream), and the rest of the gateway
    needs its own."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, soft // 4))


class Gate:
    """Counts open connections up to a limit; warns once each time the limit is reached."""

    def __init__(self, limit):
        self.limit = limit
        self.open = 0
        self._full = False

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


def connection_class(sessions=None, limit=None):
    """The connection class of one SockJS endpoint, with a gate of its own, binding the ids
    of `sessions` (sessions.Sessions; None binds nothing)."""
    gate = Gate(default_limit() if limit is None else limit)
    return type("TerminalConnection", (TerminalConnection,), {"gate": gate,
                                                              "sessions": sessions})


class TerminalConnection(SockJSConnection):
    gate = None  # set by connection_class()
    sessions = None  # set by connection_class()
    terminal = None
    _entered = False
    _bind_timer = None

    def on_open(self, info):
        self._entered = self.gate.enter()
        if not self._entered:
            self.end(2, BUSY)
            return
        self._bind_timer = asyncio.get_running_loop().call_later(
            BIND_DEADLINE, self.end, 2, NO_BIND)

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

    def on_close(self):
        if self._bind_timer is not None:
            self._bind_timer.cancel()
        if self._entered:
            self._entered = False
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
