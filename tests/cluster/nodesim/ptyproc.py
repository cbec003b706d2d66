"""A real child process, in a pseudo-terminal or with pipes, serviced on the event loop
(no threads)."""

import asyncio
import fcntl
import os
import pty
import signal
import struct
import subprocess
import termios

EOF_GRACE = 1.0          # after exit, how long to wait for output still held by background children
KILL_GRACE = 0.5         # between the hang-up and SIGKILL
MAX_PENDING_INPUT = 1 << 20


class Process:
    """on_output(stream, data) is a coroutine (1 stdout, 2 stderr); the next read waits for it,
    which is the back-pressure. on_exit(code) is called once every output has been delivered."""

    def __init__(self, argv, cwd, env, tty, stdin, on_output, on_exit):
        self._argv, self._cwd, self._env = argv, cwd, env
        self._tty, self._stdin = tty, stdin
        self._on_output, self._on_exit = on_output, on_exit
        self._loop = None
        self._proc = None
        self._in_fd = None
        self._open = {}          # output fd -> stream number, until end of file
        self._busy = set()       # output fds whose last chunk is still being delivered
        self._pending = bytearray()
        self._pidfd = None
        self._code = None
        self._done = False

    def start(self):
        self._loop = asyncio.get_running_loop()
        if self._tty:
            master, slave = pty.openpty()
            try:
                # setsid --ctty: a new session with the pty as controlling terminal (^C, jobs)
                self._proc = subprocess.Popen(["setsid", "--ctty"] + self._argv, stdin=slave,
                                              stdout=slave, stderr=slave, cwd=self._cwd,
                                              env=self._env)
            finally:
                os.close(slave)
            self._in_fd = master
            self._open = {master: 1}
        else:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            in_r, in_w = os.pipe() if self._stdin else (subprocess.DEVNULL, None)
            try:
                self._proc = subprocess.Popen(self._argv, stdin=in_r, stdout=out_w, stderr=err_w,
                                              cwd=self._cwd, env=self._env, start_new_session=True)
            finally:
                for fd in (out_w, err_w) + ((in_r,) if self._stdin else ()):
                    os.close(fd)
            self._in_fd = in_w
            self._open = {out_r: 1, err_r: 2}
        for fd in (set(self._open) | {self._in_fd}) - {None}:
            os.set_blocking(fd, False)
        for fd in self._open:
            self._loop.add_reader(fd, self._readable, fd)
        self._pidfd = os.pidfd_open(self._proc.pid)
        self._loop.add_reader(self._pidfd, self._reap)

    # -- input

    def write(self, data):
        if self._in_fd is None or self._done:
            return
        if len(self._pending) + len(data) > MAX_PENDING_INPUT:
            return  # the process is not reading; drop input rather than grow without bound
        self._pending += data
        self._flush()

    def _flush(self):
        while self._pending:
            try:
                n = os.write(self._in_fd, self._pending)
            except BlockingIOError:
                self._loop.add_writer(self._in_fd, self._flush)
                return
            except OSError:
                self._pending.clear()
                break
            del self._pending[:n]
        self._loop.remove_writer(self._in_fd)

    def resize(self, cols, rows):
        if self._tty and self._in_fd is not None:
            fcntl.ioctl(self._in_fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    # -- output

    def _readable(self, fd):
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""   # EIO: nobody holds the terminal any more
        if not data:
            self._close_output(fd)
            self._maybe_finish()
            return
        self._loop.remove_reader(fd)
        self._busy.add(fd)
        delivery = asyncio.ensure_future(self._on_output(self._open[fd], data))
        delivery.add_done_callback(lambda _: self._delivered(fd))

    def _delivered(self, fd):
        self._busy.discard(fd)
        if fd in self._open and not self._done:
            self._loop.add_reader(fd, self._readable, fd)
        self._maybe_finish()

    def _close_output(self, fd):
        if self._open.pop(fd, None) is None:
            return
        self._loop.remove_reader(fd)
        if fd == self._in_fd:  # the terminal: input and output on one descriptor
            self._close_input()
        else:
            os.close(fd)

    def _close_input(self):
        if self._in_fd is not None:
            self._loop.remove_writer(self._in_fd)
            os.close(self._in_fd)
            self._in_fd = None

    # -- exit

    def _reap(self):
        self._loop.remove_reader(self._pidfd)
        os.close(self._pidfd)
        code = self._proc.wait()
        self._code = 128 - code if code < 0 else code  # killed by signal n: 128 + n, like a shell
        if self._open:
            self._loop.call_later(EOF_GRACE, self._finish)
        self._maybe_finish()

    def _maybe_finish(self):
        if self._code is not None and not self._open and not self._busy:
            self._finish()

    def _finish(self):
        if self._done:
            return
        self._close_all()
        self._signal_session(signal.SIGKILL)  # children left behind die with the exec, as here
        self._on_exit(self._code)

    def _close_all(self):
        self._done = True
        for fd in list(self._open):
            self._close_output(fd)
        self._close_input()

    def kill(self, now=False):
        """The client went away: hang up, then SIGKILL whatever is left of the session.
        now=True (the simulator is stopping) kills at once."""
        if self._proc is None or (self._done and self._code is not None):
            return  # never started, or finished and cleaned up already
        if not self._done:
            self._close_all()
        self._signal_session(signal.SIGKILL if now else signal.SIGHUP)
        if not now:
            self._loop.call_later(KILL_GRACE, self._signal_session, signal.SIGKILL)

    def _signal_session(self, sig):
        """Signals every process of the session the child leads, background jobs included."""
        for pid in session_members(self._proc.pid):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


def session_members(sid):
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after the command: state ppid pgrp session
        if int(fields[3]) == sid:
            yield int(entry)
