"""One shell in a container, bound to one browser connection.

After the bind, the shells are tried in order until one starts; its output goes to the
browser, the browser's keystrokes and sizes go to it. The end of the process closes the
browser side (code 1), no shell at all closes it with code 2 and the error text, and the
browser going away (``stop``) ends the process.
"""

import asyncio
import codecs
import logging

from dashboard_api.terminal import protocol
from dashboard_api.terminal.execstream import ExecFailed, open_stream

log = logging.getLogger("dashboard_api.terminal")

EXITED = (1, "Process exited")
# The close code of a terminal ended by the gateway itself (as when no shell starts).
CLOSED_BY_SERVER = 2
LOST = ("The connection to the container was lost (the API server or the node stopped "
        "answering); the process may still be running. Open the terminal again.")
# Keystrokes typed before a shell shows that it runs are kept up to this size.
INPUT_LIMIT = 64 * 1024


class Terminal:
    def __init__(self, handle, namespace, pod, container, shell=None):
        self.handle = handle
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.shell = shell
        self._conn = None
        self._task = None
        self._stream = None
        self._size = None
        self._input = []
        self._input_size = 0
        self._ending = False
        self._closing = None  # (code, reason) when the gateway ends the terminal itself
        self.started = None   # the shell that started, once one did
        # observer(event, **facts): told "opened" (shell) when a shell starts and "closed"
        # (code, reason, started) when the terminal ends (the audit trail, not the bytes).
        self.observer = None

    def start(self, conn, on_end):
        self._conn = conn
        self._task = asyncio.ensure_future(self._run())
        self._task.add_done_callback(lambda task: self._ended(task, on_end))

    def _ended(self, task, on_end):
        on_end(self)
        if not task.cancelled() and task.exception() is not None:
            log.error("terminal in %s/%s/%s failed", self.namespace, self.pod, self.container,
                      exc_info=task.exception())

    def stop(self):
        """The browser went away or broke the protocol: end the process."""
        if self._task is not None and not self._ending:
            self._task.cancel()

    def close_with_toast(self, message):
        """Shows `message` in the browser (a toast frame), then ends the process and closes
        the connection with code 2 and the same message."""
        if self._task is None or self._ending or self._task.done():
            return
        self._conn.write(protocol.encode(protocol.TOAST, message))
        self._closing = (CLOSED_BY_SERVER, message)
        self._task.cancel()

    def stdin(self, text):
        data = text.encode("utf-8")
        if self._stream is not None:
            self._stream.write(data)
            if self._stream.output_seen:
                return
        # Until a shell shows it runs, keystrokes are kept for the next one in case it fails.
        if self._input_size + len(data) <= INPUT_LIMIT:
            self._input.append(data)
            self._input_size += len(data)

    def resize(self, rows, cols):
        if not rows or not cols:
            return  # 0x0 is how the upstream UI says "no more sizes"; nothing to apply
        self._size = (rows, cols)
        if self._stream is not None:
            self._stream.resize(rows, cols)

    async def _run(self):
        code, reason = EXITED
        try:
            code, reason = await self._shells()
        finally:
            self._ending = True
            if self._closing is not None:
                code, reason = self._closing
            log.info("terminal in %s/%s/%s ended: %d %s", self.namespace, self.pod,
                     self.container, code, reason)
            self._conn.end(code, reason)
            self._tell("closed", code=code, reason=reason, started=self.started)

    async def _shells(self):
        error = None
        for shell in protocol.candidates(self.shell):
            try:
                stream = await open_stream(self.handle, self.namespace, self.pod,
                                           self.container, shell)
            except ExecFailed as exc:
                error = exc
                if exc.final:
                    break
                continue
            if self.started is None:
                self.started = shell
                self._tell("opened", shell=shell)
            try:
                self._attach(stream)
                await self._pump(stream)
                if stream.broken:   # not "Process exited": the user did not end it
                    self._conn.write(protocol.encode(protocol.TOAST, LOST))
                    return CLOSED_BY_SERVER, LOST
                stream.outcome()
            except ExecFailed as exc:
                error = exc
                continue
            finally:
                self._stream = None
                stream.close()
            return EXITED
        return 2, error.message

    def _tell(self, event, **facts):
        if self.observer is not None:
            try:
                self.observer(event, **facts)
            except Exception:  # the terminal goes on whatever its observer does
                log.exception("the terminal's observer failed on %s", event)

    def _attach(self, stream):
        self._stream = stream
        if self._size is not None:
            stream.resize(*self._size)
        for data in self._input:
            stream.write(data)

    async def _pump(self, stream):
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while True:
            chunk = await stream.read()
            if chunk is not None and self._input:
                self._input, self._input_size = [], 0  # it runs: nothing to replay any more
            text = decoder.decode(chunk or b"", final=chunk is None)
            if text:
                self._conn.write(protocol.encode(protocol.STDOUT, text))
                await self._conn.drained()
            if chunk is None:
                return
