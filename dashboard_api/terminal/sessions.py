"""Terminal sessions: issued ids waiting for their SockJS connection, and running terminals.

An id is 16 random bytes in hex. It is the only thing that ties a SockJS connection to the
caller who asked for the shell, so it is single-use and lives at most ``BIND_DEADLINE`` seconds
unbound.

Each caller (told apart by a SHA-256 of their token, never the token itself) may hold at most
``PENDING_PER_CALLER`` ids waiting for a bind and ``TERMINALS_PER_CALLER`` terminals in all,
waiting or running: one token must not fill the gateway's memory and sockets. The web UI binds
each id at once, so waiting ids stay few; 50 shells open at once must work, hence the headroom.
"""

import asyncio
import collections
import hashlib
import secrets

from dashboard_api.errors import ApiError

BIND_DEADLINE = 10.0
PENDING_PER_CALLER = 20
TERMINALS_PER_CALLER = 100


def caller_key(token):
    """Who holds a session, without keeping the token itself."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Sessions:
    def __init__(self, deadline=BIND_DEADLINE, pending_limit=PENDING_PER_CALLER,
                 terminal_limit=TERMINALS_PER_CALLER):
        self.deadline = deadline
        self.pending_limit = pending_limit
        self.terminal_limit = terminal_limit
        self.pending = {}  # id -> (terminal, caller, expiry timer)
        self.running = {}  # terminal -> caller
        self._pending_of = collections.Counter()
        self._terminals_of = collections.Counter()  # waiting and running

    def check(self, caller):
        """Raises a 429 ApiError when `caller` may not start another session."""
        if self._pending_of[caller] >= self.pending_limit:
            raise ApiError(429, "too many terminal sessions waiting for their connection "
                                "(at most %d); connect them or wait %d seconds"
                                % (self.pending_limit, self.deadline), "TooManyRequests")
        if self._terminals_of[caller] >= self.terminal_limit:
            raise ApiError(429, "too many open terminals (at most %d); close one first"
                                % self.terminal_limit, "TooManyRequests")

    def add(self, terminal, caller):
        """Keeps `terminal` until it is bound or the deadline passes; returns its id.
        Raises the 429 of check() instead when `caller` is at a limit."""
        self.check(caller)
        session_id = secrets.token_hex(16)
        timer = asyncio.get_running_loop().call_later(self.deadline, self._expire, session_id)
        self.pending[session_id] = (terminal, caller, timer)
        self._pending_of[caller] += 1
        self._terminals_of[caller] += 1
        return session_id

    def bind(self, session_id, conn):
        """Starts the terminal waiting under `session_id` on `conn`; None when the id is
        unknown, already bound or expired."""
        entry = self.pending.pop(session_id, None)
        if entry is None:
            return None
        terminal, caller, timer = entry
        timer.cancel()
        _release(self._pending_of, caller)
        self.running[terminal] = caller
        terminal.start(conn, self._ended)
        return terminal

    def _expire(self, session_id):
        _terminal, caller, _timer = self.pending.pop(session_id)
        _release(self._pending_of, caller)
        _release(self._terminals_of, caller)

    def _ended(self, terminal):
        _release(self._terminals_of, self.running.pop(terminal))


def _release(counter, caller):
    # Callers with nothing left are dropped, so the counters never grow with past callers.
    counter[caller] -= 1
    if counter[caller] <= 0:
        del counter[caller]


SESSIONS = Sessions()
