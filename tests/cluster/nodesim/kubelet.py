"""One simulated kubelet's HTTPS server: what the apiserver asks of a kubelet (logs, exec)."""

from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from tornado.web import Application

from .execws import ExecHandler
from .logstream import LogsHandler

_SEGMENT = r"([^/]+)"


class KubeletServer:
    def __init__(self, node, engine, state_dir, ssl_context):
        self.node = node
        self.engine = engine
        self.state_dir = state_dir
        self.sessions = set()   # open exec handlers, ended when the simulator stops
        self.port = None
        path = "/%s/%s" % (_SEGMENT, "/".join([_SEGMENT] * 2))
        app = Application([
            ("/containerLogs" + path, LogsHandler, {"kubelet": self}),
            ("/exec" + path, ExecHandler, {"kubelet": self}),
        ])
        self._server = HTTPServer(app, ssl_options=ssl_context)

    def listen(self):
        sockets = bind_sockets(0, "127.0.0.1")
        self._server.add_sockets(sockets)
        self.port = sockets[0].getsockname()[1]
        return self.port

    def stop(self):
        self._server.stop()
        for session in list(self.sessions):
            session.abort()
