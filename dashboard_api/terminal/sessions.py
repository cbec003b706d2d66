"""Terminal sessions: sealed ids that any replica can bind, and the terminals running here.

An id is sealed, not remembered (sealing.py): whichever replica gets the SockJS connection
opens it, so no sticky sessions are needed. It is the only thing that ties a SockJS connection
to the caller who asked for the shell, so it binds within ``BIND_DEADLINE`` seconds of its
issue time (by the clock of every replica) and once per replica: a replica remembers the ids
it bound until their deadline has passed, after which every replica refuses them anyway.

Each caller (told apart by a SHA-256 of their token, never the token itself) may hold on one
replica at most ``PENDING_PER_CALLER`` ids it issued that wait for a bind and
``TERMINALS_PER_CALLER`` terminals in all, waiting or running: one token must not fill a
gateway's memory and sockets. An id issued here counts as waiting here until it is bound here
or its deadline passes (an id bound on another replica stops counting at its deadline). The web
UI binds each id at once, so waiting ids stay few; 50 shells open at once must work, hence the
headroom.
"""

import asyncio
import collections
import hashlib
import heapq
import logging
import time

from dashboard_api.serving import requestlog
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.sealing import Ticket, nonce_of

log = logging.getLogger("dashboard_api.terminal")

BIND_DEADLINE = 10.0
# How far in the future an issue time may be: the clocks of two replicas differ a little.
CLOCK_SKEW = 2.0
PENDING_PER_CALLER = 20
TERMINALS_PER_CALLER = 100

TOO_MANY_TERMINALS = "too many open terminals (at most %d); close one first"


class BindRefused(Exception):
    """A well-formed, valid id that this replica will not bind now (the caller's limit)."""


def fingerprint(session_id):
    """What the log shows of an id: enough to follow one terminal from the replica that issued
    it to the one that bound it, nothing that binds it (the request log's fingerprint)."""
    return requestlog.fingerprint(session_id)


def caller_key(token):
    """Who holds a session, without keeping the token itself."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Sessions:
    """``sealer`` seals and opens ids (sealing.Sealer); ``make_terminal(ticket)`` builds the
    terminal a bound id runs (it needs ``start(conn, on_end)`` and ``stop()``); ``clock`` is
    Unix time in seconds, injectable for tests."""

    def __init__(self, sealer, make_terminal, deadline=BIND_DEADLINE,
                 pending_limit=PENDING_PER_CALLER, terminal_limit=TERMINALS_PER_CALLER,
                 clock=time.time, on_event=None):
        self.sealer = sealer
        self.make_terminal = make_terminal
        # on_event(event, ticket, client, facts): a terminal bound here started a shell
        # ("opened") or ended ("closed"); the audit trail (clusters/context.py).
        self.on_event = on_event
        self.deadline = deadline
        self.pending_limit = pending_limit
        self.terminal_limit = terminal_limit
        self.clock = clock
        self.pending = {}  # nonce of an id issued here -> (caller, expiry timer)
        self.running = {}  # terminal -> caller
        self._bound = set()  # nonces bound here whose deadline has not passed
        self._bound_expiries = []  # heap of (expiry, nonce)
        self._pending_of = collections.Counter()
        self._terminals_of = collections.Counter()  # waiting and running

    def check(self, caller):
        """Raises a 429 ApiError when `caller` may not start another session."""
        if self._pending_of[caller] >= self.pending_limit:
            raise ApiError(429, "too many terminal sessions waiting for their connection "
                                "(at most %d); connect them or wait %d seconds"
                                % (self.pending_limit, self.deadline), "TooManyRequests")
        if self._terminals_of[caller] >= self.terminal_limit:
            raise ApiError(429, TOO_MANY_TERMINALS % self.terminal_limit, "TooManyRequests")

    def issue(self, namespace, pod, container, shell, token, impersonation=None,
              via_gateway=False):
        """The sealed id of a new session; raises the 429 of check() instead when the caller
        is at a limit. ``via_gateway``: the exec runs with the gateway's credentials and the
        ``impersonation`` lines it made (sealing.Ticket)."""
        caller = caller_key(token)
        self.check(caller)
        session_id = self.sealer.seal(Ticket(namespace, pod, container, shell, token,
                                             impersonation, self.clock(), via_gateway))
        nonce = nonce_of(session_id)
        timer = asyncio.get_running_loop().call_later(self.deadline, self._expire, nonce)
        self.pending[nonce] = (caller, timer)
        self._pending_of[caller] += 1
        self._terminals_of[caller] += 1
        log.info("terminal session %s issued for %s/%s/%s", fingerprint(session_id),
                 namespace, pod, container)
        return session_id

    def bind(self, session_id, conn):
        """Starts the terminal of `session_id` on `conn` and returns it; None when the id is
        not authentic, past its deadline or already bound here. Raises BindRefused when the
        caller already holds as many terminals here as allowed."""
        opened = self.sealer.open(session_id)
        if opened is None:
            return None
        nonce, ticket = opened
        now = self.clock()
        self._forget_bound(now)
        if not ticket.issued - CLOCK_SKEW <= now < ticket.issued + self.deadline:
            return None
        if nonce in self._bound:
            return None
        caller = caller_key(ticket.token)
        entry = self.pending.pop(nonce, None)
        if entry is not None:  # issued here: already counted among the caller's terminals
            entry[1].cancel()
            _release(self._pending_of, caller)
        elif self._terminals_of[caller] >= self.terminal_limit:
            raise BindRefused(TOO_MANY_TERMINALS % self.terminal_limit)
        else:
            self._terminals_of[caller] += 1
        self._bound.add(nonce)
        heapq.heappush(self._bound_expiries, (ticket.issued + self.deadline, nonce))
        try:
            terminal = self.make_terminal(ticket)
        except BindRefused:
            _release(self._terminals_of, caller)
            raise
        self.running[terminal] = caller
        if self.on_event is not None:
            client = getattr(conn, "client", "")
            terminal.observer = lambda event, **facts: self.on_event(
                event, ticket, client, dict(facts, session=fingerprint(session_id)))
        terminal.start(conn, self._ended)
        return terminal

    def close_all(self, message):
        """Ends every terminal running here with a toast saying `message` (the replica is
        going away; the browser may open a new terminal on another one)."""
        for terminal in list(self.running):
            terminal.close_with_toast(message)

    def _forget_bound(self, now):
        while self._bound_expiries and self._bound_expiries[0][0] <= now:
            self._bound.discard(heapq.heappop(self._bound_expiries)[1])

    def _expire(self, nonce):
        caller, _timer = self.pending.pop(nonce)
        _release(self._pending_of, caller)
        _release(self._terminals_of, caller)

    def _ended(self, terminal):
        _release(self._terminals_of, self.running.pop(terminal))


def _release(counter, caller):
    # Callers with nothing left are dropped, so the counters never grow with past callers.
    counter[caller] -= 1
    if counter[caller] <= 0:
        del counter[caller]
