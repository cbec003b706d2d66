"""Terminal sessions: issued ids waiting for their SockJS connection, and running terminals.

An id is 16 random bytes in hex. It is the only thing that ties a SockJS connection to the
caller who asked for the shell, so it is single-use and lives at most ``BIND_DEADLINE`` seconds
unbound.
"""

import asyncio
import secrets

BIND_DEADLINE = 10.0


class Sessions:
    def __init__(self, deadline=BIND_DEADLINE):
        self.deadline = deadline
        self.pending = {}  # id -> (terminal, expiry timer)
        self.running = set()

    def add(self, terminal):
        """Keeps `terminal` until it is bound or the deadline passes; returns its id."""
        session_id = secrets.token_hex(16)
        timer = asyncio.get_running_loop().call_later(self.deadline, self.pending.pop,
                                                      session_id, None)
        self.pending[session_id] = (terminal, timer)
        return session_id

    def bind(self, session_id, conn):
        """Starts the terminal waiting under `session_id` on `conn`; None when the id is
        unknown, already bound or expired."""
        entry = self.pending.pop(session_id, None)
        if entry is None:
            return None
        terminal, timer = entry
        timer.cancel()
        self.running.add(terminal)
        terminal.start(conn, self.running.discard)
        return terminal


SESSIONS = Sessions()
