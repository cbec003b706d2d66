"""Open connections are bounded: how many, how long a client may take to send a request's headers,
how long a connection may sit idle between requests, and (Tornado's own) how long a body may
take. And every response carries ``X-Content-Type-Options: nosniff``.

Tornado has one deadline for a request's header block, counted from when the server starts
waiting for it, so a client that sends a byte every few seconds holds its connection for as
long as that deadline, and an idle keep-alive connection gets the same. Here:

* a new connection must complete its first request's headers within ``--header-timeout``;
* between requests a kept-alive connection may stay silent for ``--idle-timeout``; once the
  next request's first byte is in, its headers are due within ``--header-timeout``;
* a request's body must arrive within ``--body-timeout`` (Tornado's ``body_timeout``).

Nothing else is timed: a response being written (a log download, an xhr-streaming terminal)
and a connection taken over by a websocket are never "waiting for headers", so they live as long
as they need. One sweep a half-second checks every connection (state kept per stream; the read
buffer of the stream says whether a request has begun). Connections beyond
``--max-connections`` (websockets included: they are counted until their socket closes) are
answered 503 and closed at once, without reading anything.
"""

import logging
import time
import weakref

import tornado.httpserver
import tornado.httputil
import tornado.ioloop
import tornado.iostream
from prometheus_client.core import Metric

log = logging.getLogger("dashboard_api.connections")

SWEEP_SECONDS = 0.5
REFUSED_BODY = (b'{"status":"Failure","message":"too many open connections; retry later",'
                b'"reason":"ServiceUnavailable","code":503}')
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
           b"Retry-After: 1\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n"
           b"Cache-Control: no-store\r\nContent-Length: %d\r\n\r\n%s"
           % (len(REFUSED_BODY), REFUSED_BODY))


def harden_headers(request_conn):
    """Every response written on ``request_conn`` carries X-Content-Type-Options: nosniff
    (whatever wrote it: our handlers, Tornado's own errors, sockjs-tornado, the body limit).

    The wrapper reaches the connection weakly: kept on the connection, a bound method of it
    made a reference cycle that only the collector freed, with the request, its handler and
    its response (50-60 objects a request; issue #30)."""
    write_headers = type(request_conn).write_headers
    conn = weakref.ref(request_conn)

    def hardened(start_line, headers, chunk=None):
        if "X-Content-Type-Options" not in headers:
            headers["X-Content-Type-Options"] = "nosniff"
        return write_headers(conn(), start_line, headers, chunk)

    request_conn.write_headers = hardened


class _State:
    __slots__ = ("since", "awaiting", "first_byte", "requests")

    def __init__(self, now):
        self.since = now          # accepted, or started waiting for the next request
        self.awaiting = True      # waiting for a request's headers
        self.first_byte = None    # when the sweep first saw the next request begun
        self.requests = 0         # requests whose headers were complete


class ConnectionLimits:
    """The open connections of every server of the process (HTTP and HTTPS share it)."""

    def __init__(self, max_connections, header_timeout, idle_timeout, clock=time.monotonic):
        self.max_connections = max_connections
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.clock = clock
        self.streams = {}   # IOStream -> _State
        self.closed = {"header-timeout": 0, "idle-timeout": 0, "limit": 0}
        self._sweeper = None
        self._warned = 0.0
        self._pruned = 0.0

    # --- accounting -----------------------------------------------------------------------

    def open_count(self):
        return len(self.streams)

    def _prune(self):
        for stream in [s for s in self.streams if s.closed()]:
            del self.streams[stream]

    def admit(self, stream):
        """Whether a new connection may be served (it is then counted until it closes)."""
        if self._sweeper is None:
            self._sweeper = tornado.ioloop.PeriodicCallback(self.sweep, SWEEP_SECONDS * 1000)
            self._sweeper.start()
        if len(self.streams) >= self.max_connections:
            now = self.clock()
            if now - self._pruned > 0.1:   # a flood at the limit costs one scan per 0.1 s
                self._pruned = now
                self._prune()
            if len(self.streams) >= self.max_connections:
                self.closed["limit"] += 1
                now = self.clock()
                if now - self._warned > 10:
                    self._warned = now
                    log.warning("%d connections open (--max-connections): refusing new ones",
                                len(self.streams))
                return False
        self.streams[stream] = _State(self.clock())
        return True

    def waiting(self, stream):
        """The server starts waiting for the next request on ``stream``."""
        state = self.streams.get(stream)
        if state is not None:
            state.awaiting, state.since, state.first_byte = True, self.clock(), None

    def headers_in(self, stream):
        state = self.streams.get(stream)
        if state is not None:
            state.awaiting = False
            state.requests += 1

    def sweep(self):
        now = self.clock()
        for stream, state in list(self.streams.items()):
            if stream.closed():
                del self.streams[stream]
                continue
            if not state.awaiting:
                continue
            if state.requests == 0:
                # The first request: its headers are due a header timeout after the accept
                # (which also bounds a TLS handshake that never ends).
                if now - state.since > self.header_timeout:
                    self._close(stream, "header-timeout")
            elif getattr(stream, "_read_buffer_size", 0):
                if state.first_byte is None:
                    state.first_byte = now
                elif now - state.first_byte > self.header_timeout:
                    self._close(stream, "header-timeout")
            elif now - state.since > self.idle_timeout:
                self._close(stream, "idle-timeout")

    def _close(self, stream, reason):
        self.closed[reason] += 1
        del self.streams[stream]
        stream.close()

    def stop(self):
        if self._sweeper is not None:
            self._sweeper.stop()

    # --- /metrics -------------------------------------------------------------------------

    def describe(self):
        return []

    def collect(self):
        gauge = Metric("dashboard_http_connections", "Open client connections.", "gauge")
        gauge.add_sample("dashboard_http_connections", {}, len(self.streams))
        yield gauge
        closed = Metric("dashboard_http_connections_closed",
                        "Client connections closed by the server's limits, by reason "
                        "(header-timeout, idle-timeout, limit: refused over "
                        "--max-connections).", "counter")
        for reason, count in sorted(self.closed.items()):
            closed.add_sample("dashboard_http_connections_closed_total", {"reason": reason},
                              count)
        yield closed


class _HeadersSeen(tornado.httputil.HTTPMessageDelegate):
    """Passes a request through, telling the limits when its headers are complete."""

    def __init__(self, inner, limits, stream):
        self.inner = inner
        self.limits = limits
        self.stream = stream

    def headers_received(self, start_line, headers):
        self.limits.headers_in(self.stream)
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk):
        return self.inner.data_received(chunk)

    def finish(self):
        return self.inner.finish()

    def on_connection_close(self):
        return self.inner.on_connection_close()


class BoundedHTTPServer(tornado.httpserver.HTTPServer):
    """Tornado's HTTPServer under ConnectionLimits (shared by every server of the process)."""

    def initialize(self, request_callback, limits=None, body_timeout=None, **kwargs):
        self.limits = limits
        # Tornado's own header deadline stays as a backstop behind the sweep's.
        if limits is not None:
            kwargs.setdefault("idle_connection_timeout",
                              limits.idle_timeout + limits.header_timeout + 1)
        super().initialize(request_callback, body_timeout=body_timeout, **kwargs)

    def handle_stream(self, stream, address):
        if self.limits is not None and not self.limits.admit(stream):
            _refuse(stream)
            return
        super().handle_stream(stream, address)

    def start_request(self, server_conn, request_conn):
        delegate = super().start_request(server_conn, request_conn)
        if self.limits is None:
            return delegate
        stream = server_conn.stream
        self.limits.waiting(stream)
        return _HeadersSeen(delegate, self.limits, stream)


def _refuse(stream):
    """A 503 on plain HTTP, then the close; on TLS just the close (a handshake would wait on
    the client)."""
    if isinstance(stream, tornado.iostream.SSLIOStream):
        stream.close()
        return
    try:
        written = stream.write(REFUSAL)
    except tornado.iostream.StreamClosedError:
        return
    def written_out(future):
        if not future.cancelled():
            future.exception()   # a client gone already: nothing to report
        stream.close()

    written.add_done_callback(written_out)
    tornado.ioloop.IOLoop.current().call_later(2.0, stream.close)
