"""GET /containerLogs/{namespace}/{pod}/{container}: container logs, as a kubelet serves them."""

import asyncio
import time

from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

from . import logs

FOLLOW_POLL = 0.2
FOLLOW_MAX = 3600.0     # a follow never outlives this many seconds
READ_CHUNK = 1 << 20


class _Refused(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _bool(text):
    """Go's strconv.ParseBool."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise ValueError(text)


def _instance_to_read(sim, c, previous):
    """Which instance's file answers the request, with the kubelet's refusals otherwise."""
    if previous:
        if c.last is None:
            raise _Refused(400, 'previous terminated container "%s" in pod "%s" not found'
                           % (c.name, sim.name))
        return c.last[0]
    if c.state in ("running", "terminated"):
        return c.instance
    if c.last is not None:
        return c.last[0]
    raise _Refused(400, 'container "%s" in pod "%s" is waiting to start: %s'
                   % (c.name, sim.name, c.reason))


class LogsHandler(RequestHandler):
    def initialize(self, kubelet):
        self.kubelet = kubelet
        self.closed = False

    def on_connection_close(self):
        self.closed = True

    def _options(self):
        args = {k: self.get_query_argument(k) for k in self.request.query_arguments}
        tail = args.get("tailLines", args.get("tail"))
        try:
            opts = {
                "follow": _bool(args.get("follow", "false")),
                "previous": _bool(args.get("previous", "false")),
                "timestamps": _bool(args.get("timestamps", "false")),
                "tail": None if tail in (None, "all") else int(tail),
                "limit": int(args["limitBytes"]) if "limitBytes" in args else None,
                "since_seconds": int(args["sinceSeconds"]) if "sinceSeconds" in args else None,
                "since_time": logs.parse_ts(args["sinceTime"]) if "sinceTime" in args else None,
            }
        except ValueError:
            raise _Refused(400, '{"message": "Unable to decode query."}')
        if ("sinceTime" in args and opts["since_time"] is None) or \
                (opts["since_seconds"] is not None and opts["since_time"] is not None) or \
                (opts["tail"] is not None and opts["tail"] < 0) or \
                (opts["limit"] is not None and opts["limit"] < 1) or \
                (opts["since_seconds"] is not None and opts["since_seconds"] < 1):
            raise _Refused(422, '{"message": "Invalid request."}')
        if opts["since_seconds"] is not None:
            opts["since_time"] = time.time_ns() - opts["since_seconds"] * 1_000_000_000
        return opts

    async def get(self, namespace, pod, container):
        try:
            opts = self._options()
            sim = self.kubelet.engine.pod_on(self.kubelet.node, namespace, pod)
            if sim is None:
                raise _Refused(404, 'pod "%s" does not exist' % pod)
            c = sim.container(container)
            if c is None:
                raise _Refused(404, 'container "%s" not found in pod "%s"' % (container, pod))
            instance = _instance_to_read(sim, c, opts["previous"])
        except _Refused as e:
            self.set_status(e.code)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(str(e))
            return
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        path = logs.log_path(self.kubelet.state_dir, namespace, pod, container, instance)
        render = logs.LogFilter(opts["timestamps"], opts["since_time"], opts["limit"])
        lines = logs.complete_lines(_read_from(path, 0, -1))
        offset = sum(len(line) for line in lines)
        self.write(render.render(logs.last_lines(lines, opts["tail"])))
        following = opts["follow"] and instance == c.instance and c.running
        try:
            await self.flush()
            if following:
                await self._follow(sim, c, path, offset, render)
        except StreamClosedError:
            return
        self.finish()

    async def _follow(self, sim, c, path, offset, render):
        """Streams lines as the file grows, until the instance stops or the client leaves."""
        instance = c.instance
        deadline = time.monotonic() + FOLLOW_MAX
        while not self.closed and not render.exhausted and time.monotonic() < deadline:
            alive = not sim.gone and c.instance == instance and c.running
            lines = logs.complete_lines(_read_from(path, offset, READ_CHUNK))
            offset += sum(len(line) for line in lines)
            out = render.render(lines)
            if out:
                self.write(out)
                await self.flush()
            if not alive:
                return
            await asyncio.sleep(FOLLOW_POLL)


def _read_from(path, offset, size):
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(size)
    except FileNotFoundError:
        return b""
