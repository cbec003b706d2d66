"""GET /api/v1/live: the WebSocket that carries "changed" notices to a browser (live/).

A plain WebSocket rather than SockJS, which the gateway serves for terminals: the notices are
small, rare (at most one a second per subscription) and one-way, and every browser the web UI
runs in speaks WebSocket. SockJS's fallbacks (xhr-streaming, polling, iframes) would keep a
session per browser in the gateway with its own queue, addressed by an id in URLs, and need
the terminal's hardening again; where a proxy does not pass WebSockets, the page refreshes its
lists on a timer instead, and conditional GETs make that cheap (lists/validators.py).

Bounded as any input: the same origin only (Tornado's check: a page of another site cannot
open it, whatever the browser holds), each message at most MAX_MESSAGE bytes, a ping every
PING seconds (a browser that does not answer within PING more is closed), and at most
MAX_QUEUED messages written and not yet taken by the network (a browser that stops reading is
closed with 4408 rather than queued for). The token comes in the first message, never in the
URL (live/channel.py); a connection without it after AUTH_WAIT seconds is closed with 4401.
"""

import tornado.ioloop
import tornado.websocket
import ujson

from dashboard_api.kubeapi.client import is_impersonation_header
from dashboard_api.live.channel import AUTH_WAIT, UNAUTHORIZED, Channel
from dashboard_api.serving.errors import REASONS, ApiError
from dashboard_api.serving.routes import Route

MAX_MESSAGE = 4096
MAX_QUEUED = 64
PING = 25.0
NOT_UPGRADED = ('{"status":"Failure","message":"this path speaks WebSocket only: open it with '
                'new WebSocket(...)","reason":"BadRequest","code":400}')


class LiveHandler(tornado.websocket.WebSocketHandler):
    def initialize(self, route=None, **_):
        self.route = route
        self.channel = None
        self._queued = 0
        self._auth_timer = None

    @property
    def ping_interval(self):
        return PING

    @property
    def ping_timeout(self):
        return PING

    @property
    def max_message_size(self):
        return MAX_MESSAGE

    def set_default_headers(self):
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    async def get(self, *args, **kwargs):
        if self.request.headers.get("Upgrade", "").lower() != "websocket":
            self.set_status(400)
            self.set_header("Content-Type", "application/json; charset=UTF-8")
            self.finish(NOT_UPGRADED)
            return
        await super().get(*args, **kwargs)

    def write_error(self, status_code, **kwargs):
        """The specification's JSON error (a method other than GET: a 405 naming GET)."""
        if status_code == 405:
            self.set_header("Allow", "GET")
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(ujson.dumps({"status": "Failure", "code": status_code,
                                 "reason": REASONS.get(status_code, "InternalError"),
                                 "message": REASONS.get(status_code, "Internal error")}))

    def open(self, *args, **kwargs):
        self.channel = Channel(self.request.cluster.live, self._send, self._close,
                               self._handle_for)
        self._auth_timer = tornado.ioloop.IOLoop.current().call_later(
            AUTH_WAIT, self._auth_overdue)

    async def _handle_for(self, token):
        """The cluster handle of ``token``, as a request's (handlers/base.py): on a cluster
        in impersonate mode the person of a verified ID token named with the cluster's own
        credentials, and a client's own Impersonate-* headers refused; elsewhere the token as
        it is, with those headers (the API server judges both)."""
        cluster = self.request.cluster
        impersonation = tuple((name, value) for name, value in self.request.headers.get_all()
                              if is_impersonation_header(name))
        if getattr(cluster, "impersonates", False):
            if impersonation:
                raise ApiError(403, "Impersonate-* headers are refused on cluster %s: the "
                                    "gateway names the signed-in person itself there"
                               % cluster.name, "Forbidden")
            persons = getattr(self.application.ctx, "persons", None)
            person = await persons.resolve(token) if persons is not None else None
            if person is not None:
                return cluster.api.impersonating(person.impersonation(), token)
        return cluster.api.handle(token, impersonation)

    async def on_message(self, message):
        await self.channel.receive(message)

    def on_close(self):
        if self._auth_timer is not None:
            tornado.ioloop.IOLoop.current().remove_timeout(self._auth_timer)
        if self.channel is not None and not self.channel.closed:
            self.channel.closed = True
            self.channel.hub.leave(self.channel)

    def _auth_overdue(self):
        self._auth_timer = None
        if self.channel is not None and self.channel.handle is None:
            self.channel.close(UNAUTHORIZED, "no {type: auth, token} message within %gs"
                               % AUTH_WAIT)

    def _send(self, message):
        """Writes one message; False when MAX_QUEUED are still waiting for the network."""
        if self._queued >= MAX_QUEUED:
            return False
        try:
            written = self.write_message(ujson.dumps(message, ensure_ascii=False))
        except tornado.websocket.WebSocketClosedError:
            return True   # closing: nothing more to send
        self._queued += 1
        written.add_done_callback(self._written)
        return True

    def _written(self, future):
        self._queued -= 1
        future.exception()   # a write to a closed connection: nothing to report

    def _close(self, code, reason):
        self.close(code, reason)


ROUTES = [
    Route("/api/v1/live", LiveHandler, "live", auth=False, csrf=False,
          summary="WebSocket of \"changed\" notices for the lists a browser subscribes to "
                  "(the token in its first message); a GET without Upgrade is a 400"),
]
