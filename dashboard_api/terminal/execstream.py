"""One exec stream through the API server: a WebSocket speaking ``v4.channel.k8s.io``.

Tornado's own asynchronous client carries it, so a terminal costs a socket and a coroutine,
never a thread. Every binary message starts with its channel number: 0 stdin, 1 stdout,
2 stderr, 3 the final status (a JSON Status object), 4 terminal size.
"""

import asyncio
import urllib.parse
import weakref

import tornado.httpclient
import tornado.httputil
import tornado.iostream
import tornado.websocket
import ujson

from dashboard_api.kubeapi.discovery import segment
from dashboard_api.kubeapi.watch import service_ssl_context
from dashboard_api.serving.errors import from_apiserver

PROTOCOL = "v4.channel.k8s.io"
STDIN, STDOUT, STDERR, STATUS, RESIZE = 0, 1, 2, 3, 4

_contexts = weakref.WeakKeyDictionary()


class ExecFailed(Exception):
    """The command did not start. ``final`` means another command would fail the same way
    (the API server refused the request itself), so trying the next shell is pointless."""

    def __init__(self, message, final=False):
        super().__init__(message)
        self.message = message
        self.final = final


def _ssl_context(config, service=False):
    """The TLS context of a user's exec (no client certificate), or with ``service`` of the
    gateway's own credentials (a person it impersonates: its client certificate, if any)."""
    # One context per cluster: loading the CA bundle for every terminal costs time and memory.
    contexts = _contexts.setdefault(config, {})
    if service not in contexts:
        contexts[service] = service_ssl_context(config) if service else config.ssl_context()
    return contexts[service]


def _tornado_headers(handle):
    """The handle's header lines for Tornado's client, repeated names kept one line each."""
    headers = tornado.httputil.HTTPHeaders()
    for name, value in handle.header_lines():
        headers.add(name, value)
    return headers


def pod_path(namespace, pod, subresource=None):
    path = "/api/v1/namespaces/%s/pods/%s" % (segment(namespace), segment(pod))
    return path + "/" + subresource if subresource else path


def exec_url(host, namespace, pod, container, command):
    query = urllib.parse.urlencode([("container", container), ("command", command),
                                    ("stdin", "true"), ("stdout", "true"),
                                    ("stderr", "true"), ("tty", "true")])
    scheme, rest = host.split("://", 1)
    return "%s://%s%s?%s" % ("wss" if scheme == "https" else "ws", rest,
                             pod_path(namespace, pod, "exec"), query)


async def open_stream(handle, namespace, pod, container, command):
    """Starts `command` in the container with a TTY; raises ExecFailed when the API server
    refuses or cannot be reached."""
    cluster = handle.cluster
    await handle.limiter.acquire()
    request = tornado.httpclient.HTTPRequest(
        exec_url(cluster.config.host, namespace, pod, container, command),
        headers=_tornado_headers(handle),
        ssl_options=_ssl_context(cluster.config, handle.service),
        connect_timeout=cluster.connect_timeout, request_timeout=cluster.timeout)
    # A shell may sit idle for hours: no idle limit, but a ping every interval that must be
    # answered within another (the kubelet's WebSocket answers pings), so that a connection
    # gone silent is noticed (issue 27).
    ping = cluster.exec_ping_interval
    connecting = tornado.websocket.websocket_connect(request, subprotocols=[PROTOCOL],
                                                     ping_interval=ping, ping_timeout=ping)
    try:
        # Shielded: a cancelled terminal must still close a stream that opens a moment later.
        ws = await asyncio.shield(connecting)
    except asyncio.CancelledError:
        connecting.add_done_callback(_close_when_open)
        raise
    except tornado.httpclient.HTTPClientError as exc:
        if exc.response is None:  # a timeout
            raise ExecFailed("cannot open the exec stream at the API server: %s" % exc,
                             final=True) from None
        raise ExecFailed(from_apiserver(exc.code, exc.response.body).message,
                         final=True) from None
    except (OSError, tornado.iostream.StreamClosedError, tornado.websocket.WebSocketError) as exc:
        raise ExecFailed("cannot open the exec stream at the API server: %s"
                         % (str(exc) or type(exc).__name__), final=True) from None
    return ExecStream(ws)


class ExecStream:
    def __init__(self, ws):
        self._ws = ws
        self._status = b""
        self.output_seen = False
        self.ended = False

    @property
    def broken(self):
        """Whether the stream ended without the final status that the kubelet always sends
        on channel 3 when the process ends: the connection broke (a reset, an API server or
        a kubelet gone, a ping unanswered), and the process may still be running."""
        return self.ended and not self._status

    async def read(self):
        """The next piece of process output (bytes), or None when the stream has ended."""
        while True:
            message = await self._ws.read_message()
            if message is None:
                self.ended = True
                return None
            if isinstance(message, str):
                message = message.encode("utf-8")
            if len(message) < 2:
                continue  # the server opens each channel with an empty message
            channel, data = message[0], message[1:]
            if channel in (STDOUT, STDERR):
                self.output_seen = True
                return data
            if channel == STATUS:
                self._status += data

    def outcome(self):
        """After the end: raises ExecFailed when the command never ran, else returns."""
        if not self._status:
            return
        try:
            status = ujson.loads(self._status)
        except ValueError:
            status = {"status": "Failure", "message": self._status.decode("utf-8", "replace")}
        if not isinstance(status, dict) or status.get("status") != "Failure":
            return
        if status.get("reason") == "NonZeroExitCode" or self.output_seen:
            return  # it ran and ended with an exit code of its own
        raise ExecFailed(str(status.get("message") or "the command could not be started"))

    def write(self, data):
        self._send(bytes((STDIN,)) + data)

    def resize(self, rows, cols):
        self._send(bytes((RESIZE,)) + ujson.dumps({"Width": cols, "Height": rows}).encode())

    def _send(self, message):
        try:
            future = self._ws.write_message(message, binary=True)
        except tornado.websocket.WebSocketClosedError:
            return
        future.add_done_callback(_consume)

    def close(self):
        """Releases the stream; a process still running gets an end-of-transmission keystroke
        and then loses its stream, which ends it."""
        if not self.ended:
            self.write(b"\x04")
        self._ws.close()


def _close_when_open(future):
    if not future.cancelled() and future.exception() is None:
        future.result().close()


def _consume(future):
    # A write that fails because the stream closed is expected; the reader sees the end.
    if not future.cancelled():
        future.exception()
