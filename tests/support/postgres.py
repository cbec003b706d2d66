"""A PostgreSQL server of the tests' own (issue #39: the audit trail shared by replicas), from
Debian's ``postgresql`` package (installed by bin/bootstrap): a temporary data directory made
by ``initdb``, the server on a free loopback port only (no Unix socket anyone else uses), and
stopped by its PID. ``stop`` and ``start`` again keep the data: an outage and its end.

PostgreSQL refuses to run as root: as root (CI, these machines) its programs run as the
``postgres`` user the package makes, which then owns the data directory.
"""

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

from tests.cluster.procs import free_ports

USER = "audit"
DATABASE = "audit"


def binaries():
    """The folder of initdb and postgres (the newest installed)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    assert found, "PostgreSQL is not installed: run bin/bootstrap (Debian's postgresql)"
    return os.path.dirname(found[-1])


class PostgresServer:
    """``url`` (postgresql://audit@127.0.0.1:PORT/audit), ``start()``, ``stop()``,
    ``remove()``."""

    def __init__(self):
        self.bin = binaries()
        self.root = os.geteuid() == 0
        self.dir = tempfile.mkdtemp(prefix="dashboard-postgres-")
        self.data = os.path.join(self.dir, "data")
        self.socket_dir = os.path.join(self.dir, "sockets")
        os.mkdir(self.socket_dir)
        if self.root:
            owner = pwd.getpwnam("postgres")
            for path in (self.dir, self.socket_dir):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        [self.port] = free_ports(1)
        self.url = "postgresql://%s@127.0.0.1:%d/%s" % (USER, self.port, DATABASE)
        self.proc = None
        self.log_path = os.path.join(self.dir, "postgres.log")
        self._run([os.path.join(self.bin, "initdb"), "-D", self.data, "-U", USER, "-A", "trust",
                   "--no-sync", "-E", "UTF8"])

    def _argv(self, argv):
        return ["runuser", "-u", "postgres", "--"] + argv if self.root else argv

    def _run(self, argv):
        done = subprocess.run(self._argv(argv), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])

    def start(self, timeout=30):
        """Starts the server (on the same port and data as before) and waits until it takes
        connections; creates the database the first time."""
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(self._argv([
            os.path.join(self.bin, "postgres"), "-D", self.data, "-p", str(self.port),
            "-h", "127.0.0.1", "-k", self.socket_dir, "-c", "fsync=off",
            "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
            stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        ready = os.path.join(self.bin, "pg_isready")
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, "postgres exited:\n" + self.log()
            done = subprocess.run([ready, "-h", "127.0.0.1", "-p", str(self.port), "-U", USER,
                                   "-d", "postgres"], capture_output=True, timeout=10)
            if done.returncode == 0:
                break
            time.sleep(0.1)
        else:
            self.stop()
            raise RuntimeError("postgres did not start within %ss:\n%s" % (timeout, self.log()))
        psql = os.path.join(self.bin, "psql")
        subprocess.run([psql, "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "-d",
                        "postgres", "-c", "CREATE DATABASE %s" % DATABASE],
                       capture_output=True, timeout=30)   # already there after a restart
        return self

    def query(self, sql):
        """Rows of ``sql`` through psql, as lists of strings."""
        done = subprocess.run([os.path.join(self.bin, "psql"), "-h", "127.0.0.1", "-p",
                               str(self.port), "-U", USER, "-d", DATABASE, "-At", "-F", "\t",
                               "-c", sql], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0, done.stderr
        return [line.split("\t") for line in done.stdout.splitlines()]

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline().strip())
        except (OSError, ValueError):
            return None

    def stop(self):
        """A fast shutdown (SIGINT to the postmaster, by the PID of its postmaster.pid: as
        root the process started is runuser's), waited for."""
        if self.proc is not None and self.proc.poll() is None:
            pid = self.postmaster_pid()
            if pid is not None:
                try:
                    os.kill(pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
            else:
                self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def remove(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
