"""How long a call to the API server may take, and what the caller hears when it takes longer.

Every call has a connect deadline and a response deadline (``--apiserver-connect-timeout``,
``--apiserver-request-timeout``, issue #27): a stuck API server, a partition or a load balancer
that accepts and forwards nothing must not hold a request, nor the executor thread that runs
it, past them. The response deadline covers the whole call: the wait for a worker, the wait for
the headers and the body, however slowly it trickles in.

A deadline that passes is a 504 (reason ``Timeout``) saying that the API server did not answer.
A write whose request was sent and whose answer was lost says that its outcome is unknown (it
may have been applied): nothing retries it, and the caller is told to look before trying again.

Long streams (watches, followed logs, terminals) have idle limits instead; TCP keepalive on
every socket to the API server notices a peer that is gone (``keepalive_options``).
"""

import io
import socket
import time

import urllib3.connection

from dashboard_api.serving.errors import ApiError

WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))
# POSTs that change nothing (access and token reviews): never "outcome unknown".
REVIEWS = ("/apis/authorization.k8s.io/", "/apis/authentication.k8s.io/")

# TCP keepalive: a connection whose peer is gone without a FIN or RST (a crashed node, a
# NAT that forgot it) fails after about 30 s + 3 x 10 s of silence instead of never.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 30, 10, 3


def keepalive_options():
    """``(level, option, value)`` triples turning TCP keepalive on with the timings above
    (the TCP_KEEP* names exist on Linux and, partly, elsewhere)."""
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in (("TCP_KEEPIDLE", KEEPALIVE_IDLE), ("TCP_KEEPINTVL", KEEPALIVE_INTERVAL),
                        ("TCP_KEEPCNT", KEEPALIVE_COUNT)):
        if hasattr(socket, name):
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    return options


def pool_socket_options():
    """Socket options for a urllib3 pool: its own defaults (TCP_NODELAY), which options given
    replace, plus keepalive."""
    return list(urllib3.connection.HTTPConnection.default_socket_options) + keepalive_options()


def set_keepalive(sock):
    """Turns TCP keepalive on for an open socket (one a library connected for us)."""
    for level, option, value in keepalive_options():
        try:
            sock.setsockopt(level, option, value)
        except OSError:
            pass


def changes(method, path):
    """Whether a call may change something in the cluster (its lost answer leaves the outcome
    unknown)."""
    return method in WRITES and not path.startswith(REVIEWS)


class Deadline:
    """A call's response deadline, fixed when the call starts; ``write``: whether the call
    may change something (``changes``)."""

    __slots__ = ("seconds", "at", "connect", "write")

    def __init__(self, seconds, connect, write=False):
        self.seconds = float(seconds)
        self.at = time.monotonic() + self.seconds
        self.connect = float(connect)
        self.write = write

    def remaining(self):
        return self.at - time.monotonic()

    def passed(self):
        return self.remaining() <= 0


class DeadlinePassed(TimeoutError):
    """The body did not arrive whole by the deadline."""


def read_body(response, deadline, chunk=65536):
    """The whole body of a urllib3 response read with ``preload_content=False``, by the
    deadline. Each socket wait is bounded by what is left of it, so a body that trickles in
    cannot hold the thread; a connection given up on (or broken) is closed, never returned to
    the pool for another call to find silent. Raises DeadlinePassed or urllib3's errors.

    The body grows in one buffer whose bytes are given whole (``BytesIO.getvalue`` shares its
    buffer, not a copy): a LIST page of heavy pods (4 MB) costs 4 MB while it arrives, where a
    list of chunks and their join cost twice that, the chunks from the heap (issue #41: a
    re-list's pages are its peak)."""
    body = io.BytesIO()
    try:
        while True:
            remaining = deadline.remaining()
            if remaining <= 0:
                raise DeadlinePassed()
            sock = getattr(response.connection, "sock", None)
            if sock is not None:
                sock.settimeout(remaining)
            data = response.read1(chunk)
            if not data:
                break
            body.write(data)
    except BaseException:
        response.close()
        response.release_conn()
        raise
    response.release_conn()
    return body.getvalue()


def timed_out(method, seconds, maybe_applied=False):
    """The 504 of a call that got no complete answer within ``seconds``; ``maybe_applied``:
    a write that was (or may have been) sent."""
    message = "the API server did not answer within %gs" % seconds
    if maybe_applied:
        message += unknown_outcome(method)
    return ApiError(504, message, "Timeout")


def not_connected(seconds):
    """The 504 of a call whose connection was not accepted within ``seconds`` (nothing sent)."""
    return ApiError(504, "the API server did not accept a connection within %gs" % seconds,
                    "Timeout")


def unreachable(method, exc, maybe_applied=False):
    """The 503 of a call the network failed: refused, reset, closed without an answer."""
    message = "the API server is unreachable: %s" % type(exc).__name__
    if maybe_applied:
        message += unknown_outcome(method)
    return ApiError(503, message, "ServiceUnavailable")


def unknown_outcome(method):
    return ("; the outcome of this %s is unknown (it may have been applied): look at the "
            "object before trying again" % method)
