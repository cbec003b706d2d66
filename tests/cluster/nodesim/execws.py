"""GET /exec/{namespace}/{pod}/{container}: exec over WebSocket, the kubelet's channel protocol.

Every message starts with a channel number: 0 stdin, 1 stdout, 2 stderr, 3 error (the final
status), 4 resize. The binary protocols put the number in the first byte; the base64 ones put it
as an ASCII digit followed by base64 data. The v4 protocols end with a metav1.Status as JSON; the
older ones send only the error text on failure.
"""

import base64
import json
import os
import secrets

from tornado.websocket import WebSocketClosedError, WebSocketHandler

from . import images
from .ptyproc import Process

STDIN, STDOUT, STDERR, ERROR, RESIZE = range(5)
PROTOCOLS = {  # name -> (binary, v4)
    "v4.channel.k8s.io": (True, True),
    "v4.base64.channel.k8s.io": (False, True),
    "channel.k8s.io": (True, False),
    "base64.channel.k8s.io": (False, False),
}
MAX_RESIZE_BUFFER = 4096


def _status_json(status):
    return json.dumps(dict({"metadata": {}}, **status), separators=(",", ":")).encode()


def success():
    return {"status": "Success"}


def exit_failure(argv, code):
    return {"status": "Failure",
            "message": "command terminated with non-zero exit code: error executing command "
                       "[%s], exit code %d" % (" ".join(argv), code),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]}}


def internal_error(cause):
    cause = "error executing command in container: " + cause
    return {"status": "Failure", "message": "Internal error occurred: " + cause,
            "reason": "InternalError", "details": {"causes": [{"message": cause}]}, "code": 500}


def not_found(argv0):
    """What containerd (runc) says when the executable is missing from the image."""
    return internal_error(
        'failed to exec in container: failed to start exec "%s": OCI runtime exec failed: exec '
        'failed: container_linux.go:370: starting container process caused: exec: "%s": '
        'executable file not found in $PATH: unknown' % (secrets.token_hex(32), argv0))


class ExecHandler(WebSocketHandler):
    def initialize(self, kubelet):
        self.kubelet = kubelet
        self.proc = None
        self.binary, self.v4 = True, False
        self.resize_buffer = b""

    def check_origin(self, origin):
        return True  # a kubelet serves the apiserver, not browsers

    async def get(self, namespace, pod, container):
        refusal = self._check(namespace, pod, container)
        if refusal:
            self.set_status(refusal[0])
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.finish(refusal[1])
            return
        await super().get(namespace, pod, container)

    def _check(self, namespace, pod, container):
        self.command = self.get_query_arguments("command")
        self.tty = self.get_query_argument("tty", "") == "1"
        self.want_stdin = self.get_query_argument("input", "") == "1"
        self.want_stdout = self.get_query_argument("output", "") == "1"
        # with a terminal, stderr is merged into stdout: the kubelet ignores the error stream
        self.want_stderr = self.get_query_argument("error", "") == "1" and not self.tty
        if not (self.want_stdin or self.want_stdout or self.want_stderr):
            return 400, "you must specify at least 1 of stdin, stdout, stderr"
        self.sim = self.kubelet.engine.pod_on(self.kubelet.node, namespace, pod)
        if self.sim is None:
            return 404, "pod does not exist"
        self.container = self.sim.container(container)
        if self.container is None or not self.container.running:
            return 500, 'container not found ("%s")' % container
        if not self.command:
            return 400, "no command specified"
        offered = self.request.headers.get("Sec-WebSocket-Protocol")
        if offered and not any(p.strip() in PROTOCOLS for p in offered.split(",")):
            return 400, "requested protocol(s) are not supported: %s; supports %s" % (
                offered, list(PROTOCOLS))
        return None

    def select_subprotocol(self, subprotocols):
        for name in subprotocols:
            if name in PROTOCOLS:
                self.binary, self.v4 = PROTOCOLS[name]
                return name
        return None

    def open(self, namespace, pod, container):
        self.kubelet.sessions.add(self)
        # an empty frame on the lowest writable channel says the streams are ready
        first = STDOUT if self.want_stdout else STDERR if self.want_stderr else ERROR
        self._send_nowait(first, b"")
        path = images.resolve_command(self.container.image, self.command[0])
        if path is None:
            self._end(not_found(self.command[0]))
            return
        rootfs = os.path.join(self.kubelet.state_dir, "rootfs", namespace, pod, container)
        os.makedirs(rootfs, exist_ok=True)
        self.proc = Process([path] + self.command[1:], rootfs, self._environment(rootfs),
                            self.tty, self.want_stdin, self._send, self._exited)
        try:
            self.proc.start()
        except OSError as e:
            self.proc = None
            self._end(internal_error(str(e)))

    def _environment(self, home):
        env = {"PATH": images.EXEC_PATH, "HOSTNAME": self.sim.name, "HOME": home}
        for var in (self.sim.spec_of(self.container.name) or {}).get("env") or []:
            if "value" in var:
                env[var["name"]] = var["value"]
        if self.tty:
            env["TERM"] = "xterm"
        return env

    def _frame(self, channel, data):
        if self.binary:
            return bytes([channel]) + data
        return str(channel) + base64.b64encode(data).decode("ascii")

    async def _send(self, channel, data):
        if (channel == STDOUT and not self.want_stdout) or \
                (channel == STDERR and not self.want_stderr):
            return  # a stream nobody asked for is discarded
        try:
            await self.write_message(self._frame(channel, data), binary=self.binary)
        except WebSocketClosedError:
            pass

    def _send_nowait(self, channel, data):
        try:
            self.write_message(self._frame(channel, data), binary=self.binary)
        except WebSocketClosedError:
            pass

    def _exited(self, code):
        self._end(success() if code == 0 else exit_failure(self.command, code))

    def _end(self, status):
        """The final status on the error channel, then close, as the kubelet does."""
        if self.v4:
            self._send_nowait(ERROR, _status_json(status))
        elif status["status"] != "Success":
            self._send_nowait(ERROR, status["message"].encode())
        self.close()

    def on_message(self, message):
        if self.binary:
            if not isinstance(message, bytes) or not message:
                return
            channel, data = message[0], message[1:]
        else:
            if not message or not message[:1].isdigit():
                return
            try:
                channel, data = int(message[0]), base64.b64decode(message[1:])
            except ValueError:
                return
        if channel == STDIN and self.want_stdin and self.proc:
            self.proc.write(data)
        elif channel == RESIZE and self.proc:
            self._resize(data)

    def _resize(self, data):
        """The resize channel is a stream of JSON objects {"Width": .., "Height": ..}."""
        self.resize_buffer = (self.resize_buffer + data)[-MAX_RESIZE_BUFFER:]
        text = self.resize_buffer.decode("utf-8", "replace")
        decoder = json.JSONDecoder()
        pos = 0
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            try:
                size, pos = decoder.raw_decode(text, pos)
            except ValueError:
                break
            if isinstance(size, dict):
                width, height = size.get("Width"), size.get("Height")
                if isinstance(width, int) and isinstance(height, int) and min(width, height) >= 0:
                    self.proc.resize(min(width, 65535), min(height, 65535))
        self.resize_buffer = text[pos:].encode("utf-8")

    def on_close(self):
        self.kubelet.sessions.discard(self)
        if self.proc:
            self.proc.kill()

    def abort(self):
        """The simulator is stopping: end the process and the connection."""
        self.kubelet.sessions.discard(self)
        if self.proc:
            self.proc.kill(now=True)
        self.close()
