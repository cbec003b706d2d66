"""Child processes of the local cluster: started with output to a log file, stopped by PID."""
import ctypes
import os
import signal
import socket
import subprocess

_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux
    _prctl = None


def _die_with_parent():
    # Runs in the child between fork and exec: if the test runner is killed outright
    # (no atexit), the kernel sends SIGTERM to the component instead of orphaning it.
    # The signal follows the *thread* that forked, so start clusters from a long-lived one.
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


# Every port free_ports has handed out in this process. A port is named long before it is
# listened on at times (the OpenID provider is told the gateways' addresses before they start),
# and the kernel gives a port just closed to the next bind to port 0 as readily as any other.
_HANDED_OUT = set()
# Ports asked of the kernel per port handed out, at most (a bound; a few in practice).
_TRIES = 50


def free_ports(count):
    """`count` distinct TCP ports on 127.0.0.1, free now and never handed out before by this
    process; a later clash with a port another process takes is the caller's."""
    socks = []
    ports = []
    try:
        for _ in range(count * _TRIES):
            if len(ports) == count:
                break
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            socks.append(s)   # held until all are picked: the kernel gives each once
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            if port not in _HANDED_OUT:
                ports.append(port)
        if len(ports) < count:
            raise OSError("no TCP port on 127.0.0.1 left that was not handed out before")
        _HANDED_OUT.update(ports)
        return ports
    finally:
        for s in socks:
            s.close()


class Process:
    """One component: stdout and stderr go to `log_path`."""

    def __init__(self, name, argv, log_path, env=None, cwd=None):
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "ab")
        try:
            self.popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                env=env, cwd=cwd, start_new_session=True, preexec_fn=_die_with_parent)
        except OSError:
            self._log.close()
            raise

    @property
    def pid(self):
        return self.popen.pid

    def exit_code(self):
        """None while running."""
        return self.popen.poll()

    def stop(self, grace=10.0):
        """SIGTERM, wait up to `grace` seconds, then SIGKILL. Only this PID is signalled."""
        if self.popen.poll() is None:
            try:
                self.popen.send_signal(signal.SIGTERM)
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                try:
                    self.popen.wait(5)
                except subprocess.TimeoutExpired:
                    pass  # unkillable (D state): nothing more we can do
        self._log.close()

    def log_tail(self, lines=25, max_bytes=16384):
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - max_bytes))
                data = f.read()
        except OSError as e:
            return f"(log unreadable: {e})"
        text = data.decode("utf-8", "replace").splitlines()[-lines:]
        return "\n".join(text)
