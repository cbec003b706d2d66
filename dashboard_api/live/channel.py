"""One browser's connection to the notices: its credentials, its subscriptions, and the
messages it may send (pure of HTTP: handlers/live.py carries them over a WebSocket).

The browser speaks first, within AUTH_WAIT seconds: ``{"type": "auth", "token": ...}`` (the
token in the connection's first message, never in its URL, which logs and proxies keep). Then
``{"type": "subscribe", "id": ..., "path": "api/v1/pod/ns?itemsPerPage=10"}`` (the list as the
browser fetches it; the same id again replaces it) and ``{"type": "unsubscribe", "id": ...}``.
It hears ``ready`` (with whether the cluster's API server answers), ``subscribed`` or
``refused`` (code, reason and message, as the list itself would answer), ``changed`` (at most
one a second per subscription) and ``cluster`` (the API server stopped or started answering).

Everything a browser sends is bounded before work is spent on it: a message's size (the
WebSocket's limit), its shape, MAX_SUBSCRIPTIONS per connection, MAX_RATE messages a second
(MAX_BURST at once). A connection that breaks a bound is closed with a code and a reason that
say which.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import ujson

from dashboard_api.serving.bearer import expiry
from dashboard_api.serving.errors import ApiError

AUTH_WAIT = 10.0
MAX_SUBSCRIPTIONS = 16
MAX_ID = 64
MAX_RATE = 5.0
MAX_BURST = 40

# Close codes (4000-4999 are the application's): what the browser should do next.
UNAUTHORIZED = 4401     # sign in again
FORBIDDEN = 4403        # credentials this cluster refuses as sent (impersonation headers)
TOO_MANY = 4429         # too many messages; reconnect later
BAD_MESSAGE = 4400      # a message the gateway does not understand
TOO_SLOW = 4408         # the browser did not read its notices (nor answer pings)
GONE = 4410             # the cluster is no longer watched here; reconnect (or reload)


class Channel:
    """One connection. ``send(message: dict) -> bool`` queues a message (False: the queue is
    full, the connection is too slow); ``close(code, reason)`` ends the connection;
    ``handle_for(token)`` (a coroutine) is the cluster handle of a token, as a request's
    (handlers/base.py ``handle_for``: in impersonate mode the verified person), or the
    ApiError that refuses it."""

    def __init__(self, hub: Any, send: Callable[[dict], bool], close: Callable[[int, str], None],
                 handle_for: Callable[[str], Any], clock: Callable[[], float] = time.monotonic):
        self.hub = hub
        self._send = send
        self._close = close
        self._handle_for = handle_for
        self.clock = clock
        self.opened = clock()
        self.handle = None        # the caller's handle, once the auth message is in
        self.expires = None       # the token's own exp (Unix seconds), when it says one
        self.subscriptions = {}   # id -> live.hub.Subscription
        self.closed = False
        self._allowance = float(MAX_BURST)
        self._counted = self.opened

    # --- to the browser ----------------------------------------------------------------------

    def send(self, message: dict) -> None:
        if self.closed:
            return
        if not self._send(message):
            self.close(TOO_SLOW, "the browser did not read its notices: reconnect")

    def close(self, code: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.hub.leave(self)
        self._close(code, reason[:120])

    # --- from the browser --------------------------------------------------------------------

    async def receive(self, text: str | bytes) -> None:
        """One message of the browser's (already bounded in size by the transport)."""
        if self.closed:
            return
        if not self._within_rate():
            self.close(TOO_MANY, "too many messages: at most %g a second" % MAX_RATE)
            return
        message = _decoded(text)
        kind = message.get("type") if message is not None else None
        if self.handle is None:
            if kind != "auth" or not isinstance(message.get("token"), str) or \
                    not _printable(message["token"]):
                self.close(UNAUTHORIZED, "the first message must be {type: auth, token}")
                return
            token = message["token"]
            try:
                handle = await self._handle_for(token)
            except ApiError as exc:
                self.close(UNAUTHORIZED if exc.code == 401 else FORBIDDEN, exc.message)
                return
            if not self.closed:
                self.signed_in(handle, token)
            return
        if kind == "subscribe":
            await self._subscribe(message)
        elif kind == "unsubscribe":
            sid = message.get("id")
            if _valid_id(sid):
                self.hub.unsubscribe(self, sid)
        elif kind == "auth":
            self.close(BAD_MESSAGE, "already signed in on this connection")
        else:
            self.close(BAD_MESSAGE, "unknown message: expected subscribe or unsubscribe")

    def signed_in(self, handle: Any, token: str) -> None:
        """The connection speaks for ``handle`` (its token's) from now on."""
        self.handle = handle
        self.expires = expiry(token)
        self.hub.join(self)

    def auth_overdue(self) -> bool:
        return self.handle is None and self.clock() - self.opened >= AUTH_WAIT

    async def _subscribe(self, message):
        sid = message.get("id")
        if not _valid_id(sid):
            self.close(BAD_MESSAGE, "a subscription's id is a string of 1 to %d characters"
                       % MAX_ID)
            return
        if sid not in self.subscriptions and len(self.subscriptions) >= MAX_SUBSCRIPTIONS:
            self.send({"type": "refused", "id": sid, "code": 429, "reason": "TooMany",
                       "message": "at most %d subscriptions per connection"
                       % MAX_SUBSCRIPTIONS})
            return
        await self.hub.subscribe(self, sid, message.get("path"))

    def _within_rate(self):
        now = self.clock()
        self._allowance = min(float(MAX_BURST),
                              self._allowance + (now - self._counted) * MAX_RATE)
        self._counted = now
        if self._allowance < 1.0:
            return False
        self._allowance -= 1.0
        return True


def _decoded(text):
    try:
        message = ujson.loads(text)
    except (ValueError, TypeError):
        return None
    return message if isinstance(message, dict) else None


def _valid_id(sid):
    return isinstance(sid, str) and 0 < len(sid) <= MAX_ID


def _printable(token):
    return 0 < len(token) <= 16384 and all(33 <= ord(c) <= 126 for c in token)
