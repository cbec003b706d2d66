"""The HTTP client of one watch: Tornado's, with TCP keepalive, a way to cut it, and flow
control.

Tornado's client has a connect deadline and a total one, but a watch is meant to stay open for
minutes, and a watch whose connection went silent (a NAT or a firewall forgot it, no RST ever
comes) would wait for its total deadline at best. Each reflector has a client of its own whose
connections have TCP keepalive on and are known to it, so that the reflector's idle limit
(``Reflector.watch``) can close the connection of a watch that has gone quiet: the fetch then
fails at once and the watch is resumed from its last resourceVersion.

Flow control: a watch's streaming callback may return an awaitable, and the connection reads
no more until it is done (Tornado 6.6 does so; 6.5, the last release for Python 3.9 and 3.10,
drops the callback's answer: ``FlowControlled`` passes it on). A reflector that cannot keep up
with its watch so makes the API server wait (TCP's own window) rather than holding what it
has not applied yet in memory (issue #41).
"""

import weakref

import tornado.httpclient
import tornado.simple_httpclient
import tornado.tcpclient

from dashboard_api.kubeapi.deadlines import set_keepalive


class TrackingTCPClient(tornado.tcpclient.TCPClient):
    """Connects as Tornado does, then turns keepalive on and remembers the stream."""

    def __init__(self, resolver=None):
        super().__init__(resolver=resolver)
        self.streams = weakref.WeakSet()

    async def connect(self, *args, **kwargs):
        stream = await super().connect(*args, **kwargs)
        if stream.socket is not None:
            set_keepalive(stream.socket)
        self.streams.add(stream)
        return stream

    def cut(self):
        """Closes every open connection (the fetch on it fails with a 599); returns how many."""
        open_streams = [s for s in self.streams if not s.closed()]
        for stream in open_streams:
            stream.close()
        return len(open_streams)


class FlowControlled(tornado.simple_httpclient._HTTPConnection):
    """Tornado's client connection, passing on what the streaming callback returns (an
    awaitable: read no more until it is done)."""

    def data_received(self, chunk):
        if self.request.streaming_callback is not None and not self._should_follow_redirect():
            return self.request.streaming_callback(chunk)
        return super().data_received(chunk)


class WatchHTTPClient(tornado.simple_httpclient.SimpleAsyncHTTPClient):
    def _connection_class(self):
        return FlowControlled


def watch_client():
    """A client for one watch at a time (a LIST page or two may share it)."""
    client = WatchHTTPClient(
        force_instance=True, max_clients=2, max_body_size=1 << 62, max_buffer_size=1 << 27)
    client.tcp_client.close()
    client.tcp_client = TrackingTCPClient(resolver=client.resolver)
    return client
