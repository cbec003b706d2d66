"""One maximum request body size for the whole gateway, enforced before the body is read; routes
that need less have a smaller one of their own (routes.Route.max_body: sign-in takes 256 KiB).

Tornado buffers a request's body whole before the handler runs (up to the server's own limit,
100 MB by default), so a check in a handler comes too late to save the memory. This delegate sits
between the HTTP connection and the application's router: a declared ``Content-Length`` over the
limit is answered with the 413 JSON error as soon as the headers are in, and a chunked body is cut
off at the limit as it arrives. After such an answer Tornado closes the connection instead of
reading the rest (it does so for any response finished while the request is still being read).
"""

import logging

import tornado.httputil
import ujson

from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.paths import split_path

log = logging.getLogger("dashboard_api.bodylimit")

# Large enough that Tornado's own Content-Length check never fires before ours (it would answer
# a bare 400 after our 413); the connection is closed once the 413 is written.
_UNBOUNDED = 1 << 62


def too_large(size, limit):
    return ApiError(413, "the request body has %s bytes; the limit is %d bytes"
                    % (size, limit), "RequestEntityTooLarge")


class BodyLimit(tornado.httputil.HTTPMessageDelegate):
    """Wraps the router's delegate of one request; passes everything through until the body
    is known to exceed ``limit`` bytes, then answers 413 itself and drops the rest."""

    def __init__(self, inner, request_conn, limit, route_limits=(), abandoned=None):
        """``abandoned``: called when a request the router already took (its headers passed
        on) is refused here, a chunked body cut off: its handler never finishes, so whatever
        counts it as in flight is told here (server.Application: the shutdown's count)."""
        self.inner = inner
        self.abandoned = abandoned
        self.conn = request_conn
        self.limit = limit
        self.route_limits = route_limits  # (method, path regex, limit) of routes with their own
        self.received = 0
        self.refused = False
        self.path = ""

    def headers_received(self, start_line, headers):
        self.path = getattr(start_line, "path", "")
        path = split_path(self.path.split("?", 1)[0])[1]  # the path within its cluster
        method = getattr(start_line, "method", "")
        for route_method, pattern, limit in self.route_limits:
            if limit < self.limit and route_method == method and pattern.match(path):
                self.limit = limit
        declared = headers.get("Content-Length", "")
        if declared.strip().isdigit() and int(declared) > self.limit:
            self.conn.set_max_body_size(_UNBOUNDED)
            self._refuse(int(declared))
            return None
        return self.inner.headers_received(start_line, headers)

    def data_received(self, chunk):
        if self.refused:
            return None
        self.received += len(chunk)
        if self.received > self.limit:
            self._refuse("more than %d" % self.limit)
            self.inner.on_connection_close()  # the handler (if any) sees the request end
            if self.abandoned is not None:
                self.abandoned()
            return None
        return self.inner.data_received(chunk)

    def finish(self):
        if not self.refused:
            self.inner.finish()

    def on_connection_close(self):
        if not self.refused:
            self.inner.on_connection_close()

    def _refuse(self, size):
        self.refused = True
        log.info("413 for %s: request body of %s bytes, limit %d", self.path.split("?")[0],
                 size, self.limit)
        body = ujson.dumps(too_large(size, self.limit).body()).encode()
        headers = tornado.httputil.HTTPHeaders({
            "Content-Type": "application/json; charset=UTF-8",
            "Content-Length": str(len(body)), "Connection": "close",
            "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})
        start = tornado.httputil.ResponseStartLine("HTTP/1.1", 413, "Request Entity Too Large")
        self.conn.write_headers(start, headers, body)
        self.conn.finish()
