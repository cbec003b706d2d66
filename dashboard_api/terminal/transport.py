"""The SockJS endpoint at /api/sockjs (sockjs-tornado 1.0.7), with its unsafe defaults fixed.

What the stock library does and what we do instead:

* JSONP and htmlfile transports reflect the ``c`` callback parameter into script; both are off
  (with their ``jsonp_send`` route and the iframe page, which loads an old client from a CDN).
  The browser client falls back to xhr-polling, which every browser has.
* XHR transports answer any ``Origin`` with credentialed CORS headers; here they send no CORS
  headers at all and refuse cross-origin requests, and websockets accept only same-origin
  browsers (non-browser clients send no Origin and are let through, as Tornado does).
* No JSESSIONID cookie.
* The library lets any request that names a session id use that session: a POST to
  ``xhr_send`` from anyone who learnt the id typed into that shell. Here a session belongs to
  whoever opened it: the request that opens a session over an HTTP transport (xhr,
  xhr_streaming, eventsource) gets a per-session secret in a cookie (HttpOnly,
  SameSite=Strict, Secure over HTTPS, scoped to the session's own path), and every later
  request of that session (xhr_send included) must present it, or it is refused with 403
  (see owner.py). Browsers send it with their same-origin requests; nothing else has it.
* Streaming transports (xhr-streaming, eventsource) never start the heartbeat timer; every
  attached transport gets one here, at most every 25 s, so idle proxies keep the stream.
* Close frames are built by string formatting; a reason with a quote broke the frame. Reasons
  are JSON-escaped here.
"""

import asyncio
import json
import os
import urllib.parse
import warnings

import tornado.web

from dashboard_api.serving.paths import split_path
from dashboard_api.terminal import owner as owner_mod

with warnings.catch_warnings():
    # The library decorates its handlers with its own copy of Tornado's old @asynchronous, which
    # warns at every use while the module is imported; the decorator itself works on Tornado 6.
    warnings.filterwarnings("ignore", message="@asynchronous is deprecated",
                            category=DeprecationWarning)
    from sockjs.tornado import SockJSConnection, SockJSRouter, session, static, transports

# The one module that imports sockjs-tornado (quietly): the others take its names from here.
__all__ = ["PREFIX", "SETTINGS", "SockJSConnection", "SockJSRouter", "TerminalSession",
           "router", "same_origin", "url_specs"]

PREFIX = "/api/sockjs"
HEARTBEAT_SECONDS = 25
# Output waiting for a polling client that has not come back yet; beyond it the reader pauses.
QUEUE_LIMIT = 256 * 1024
POLL_SECONDS = 0.02

SETTINGS = {
    "disabled_transports": ["jsonp", "htmlfile"],
    "jsessionid": False,
    "heartbeat_delay": HEARTBEAT_SECONDS,
    "disconnect_delay": 5,
    "response_limit": 128 * 1024,
    "websocket_allow_origin": (),
    "verify_ip": True,
}

_DROPPED = (transports.JSONPSendHandler, static.IFrameHandler, transports.RawWebSocketTransport)


class TerminalSession(session.Session):
    """A SockJS session with heartbeats on every transport, escaped close reasons and a way to
    wait until the browser has taken the output sent so far. ``owner`` is the nonce of its
    opener's cookie (owner.py)."""

    owner = None

    def set_handler(self, handler, start_heartbeat=True):
        # The library skips heartbeats on streaming transports; idle proxies then cut them.
        return super().set_handler(handler, True)

    def close(self, code=3000, message="Go away!"):
        # The library writes the reason between quotes unescaped: escape it as a JSON string body.
        message = json.dumps(message)[1:-1]
        handler = self.handler
        if isinstance(handler, transports.XhrPollingTransport) and not handler.active:
            # This poll's answer is already written: the close frame waits for the next poll
            # (the library would append it past the Content-Length and lose it).
            session.BaseSession.close(self, code, message)
        else:
            super().close(code, message)

    async def drained(self):
        """Returns when the output is on its way to the browser or the session is closed."""
        while not self.is_closed:
            write = getattr(self.handler, "last_write", None)
            if write is not None and not write.done():
                await asyncio.wait([write])
            elif len(self.send_queue) > QUEUE_LIMIT:
                # A polling client between two polls: wait for it, or for the session expiry.
                await asyncio.sleep(POLL_SECONDS)
            else:
                return


def same_origin(request):
    """Whether a request comes from a page of our own origin (or not from a browser at all)."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None:  # modern browsers say it themselves
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("Origin")
    return origin is None or urllib.parse.urlsplit(origin).netloc.lower() == request.host.lower()


class _OwnOrigin:
    """For the HTTP transports: no CORS headers, cross-origin requests refused."""

    last_write = None

    def prepare(self):
        super().prepare()  # counts the connection; finish() uncounts it, refused or not
        if not same_origin(self.request):
            raise tornado.web.HTTPError(403, "cross-origin request refused")

    def preflight(self):
        pass

    def verify_origin(self):
        return True

    def flush(self, include_footers=False):
        self.last_write = super().flush(include_footers)
        return self.last_write


def refuse_when_client_full(handler):
    """429 before a request becomes a new SockJS connection when its client holds its budget
    of connections that have bound nothing yet (connection.py)."""
    conn_class = handler.server.get_connection_class()
    gate = getattr(conn_class, "gate", None)
    if gate is not None and gate.client_full(conn_class.proxies.client(
            handler.request.headers, handler.request.remote_ip)):
        # No log message: a flood would write one warning per attempt (the Gate warns once).
        raise tornado.web.HTTPError(429)


class _OwnSession(_OwnOrigin):
    """For the transports that carry a session (xhr, xhr_streaming, eventsource, xhr_send):
    only the session's opener may use it (see the module doc)."""

    _owner_nonce = None

    def prepare(self):
        super().prepare()
        owners = self.server.owners  # set by url_specs()
        session_id = self.path_kwargs.get("session_id", "")
        session = self.server.get_session(session_id)
        if session is not None:
            if not owners.check(session_id, self.get_cookie(owner_mod.COOKIE),
                                getattr(session, "owner", None)):
                raise tornado.web.HTTPError(403, "this terminal connection belongs to "
                                                 "another client")
            if getattr(session, "cluster", None) != split_path(self.request.path)[0]:
                raise tornado.web.HTTPError(403, "this terminal connection belongs to "
                                                 "another cluster")
        elif isinstance(self, transports.XhrSendHandler):
            pass  # no such session: the library answers 404
        else:  # this request opens the session: its answer carries the secret
            refuse_when_client_full(self)
            value, self._owner_nonce = owners.issue(session_id)
            self.set_cookie(owner_mod.COOKIE, value, path=self.request.path.rsplit("/", 1)[0],
                            httponly=True, samesite="Strict",
                            secure=self.request.protocol == "https")

    def _attach_session(self, session_id, start_heartbeat=False):
        # Runs right after prepare(), with no await between: the session prepare() saw
        # absent is made here, by this request.
        attached = super()._attach_session(session_id, start_heartbeat)
        if self._owner_nonce is not None and self.session is not None:
            self.session.cluster = split_path(self.request.path)[0]
            self.session.owner = self._owner_nonce
        return attached


class _WebSocket(transports.WebSocketTransport):
    last_write = None

    def prepare(self):
        super().prepare()
        refuse_when_client_full(self)

    def write_message(self, message, binary=False):
        self.last_write = super().write_message(message, binary)
        return self.last_write


def _own_origin(cls):
    return type(cls.__name__, (_OwnOrigin, cls), {})


def _own_session(cls):
    return type(cls.__name__, (_OwnSession, cls), {})


def _safe(cls):
    if cls is transports.WebSocketTransport:
        return _WebSocket
    if issubclass(cls, transports.pollingbase.PollingTransportBase):
        return _own_session(cls)
    if issubclass(cls, (static.InfoHandler, static.ChunkingTestHandler)):
        return _own_origin(cls)
    return cls


def router(connection, owner_key=None):
    """The SockJS router for `connection`; build it on the running event loop. `owner_key`
    signs the session owners' cookies (random when None: then only this process knows it)."""
    sockjs_router = SockJSRouter(connection, PREFIX, SETTINGS, session_kls=TerminalSession)
    sockjs_router.owners = owner_mod.Owners(owner_key or os.urandom(32))
    return sockjs_router


def url_specs(sockjs_router):
    """The router's URL specs with the unsafe handlers left out and the rest made safe."""
    if getattr(sockjs_router, "owners", None) is None:
        sockjs_router.owners = owner_mod.Owners(os.urandom(32))
    return [(pattern, _safe(cls), kwargs) for pattern, cls, kwargs in sockjs_router.urls
            if cls not in _DROPPED]
