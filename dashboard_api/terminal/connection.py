"""The SockJS connection of a terminal: the first frame binds it, later frames feed it."""

import logging

import tornado.websocket

from dashboard_api.terminal import protocol
from dashboard_api.terminal.sessions import SESSIONS
from dashboard_api.terminal.transport import SockJSConnection

log = logging.getLogger("dashboard_api.terminal")

UNKNOWN_SESSION = "unknown or expired terminal session"


class TerminalConnection(SockJSConnection):
    terminal = None

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
        if frame is not None and frame.op == protocol.BIND:
            self.terminal = SESSIONS.bind(frame.session_id, self)
        if self.terminal is None:
            self.end(2, UNKNOWN_SESSION)

    def on_close(self):
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
