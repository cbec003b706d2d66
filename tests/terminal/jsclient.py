"""The real JavaScript SockJS client (tests/terminal/js/driver.js under node), from Python.

One node process carries any number of named SockJS connections. Events come back on a queue
read by a thread; every wait is bounded.
"""

import json
import os
import queue
import shutil
import subprocess
import threading
import time

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


class Conn:
    """What one named connection has received so far."""

    def __init__(self, name):
        self.name = name
        self.transport = None
        self.frames = []
        self.closed = None  # (code, reason)

    @property
    def output(self):
        return "".join(f["Data"] for f in self.frames
                       if isinstance(f, dict) and f.get("Op") == "stdout")


class JsClient:
    def __init__(self):
        node = shutil.which("node")
        assert node, "node is needed for the terminal tests"
        assert os.path.isdir(os.path.join(JS_DIR, "node_modules", "sockjs-client")), \
            "run `npm ci` in tests/terminal/js first"
        self.proc = subprocess.Popen([node, "driver.js"], cwd=JS_DIR, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.events = queue.Queue()
        self.conns = {}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            if line.strip():
                self.events.put(json.loads(line))
        self.events.put(None)

    def _command(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()

    # --- commands ---------------------------------------------------------------------------

    def open(self, name, url, bind=None, transports=None, rows=None, cols=None):
        self.conns[name] = Conn(name)
        cmd = {"cmd": "open", "name": name, "url": url}
        if bind is not None:
            cmd["bind"] = bind
        if transports:
            cmd["transports"] = transports
        if rows:
            cmd.update(rows=rows, cols=cols)
        self._command(**cmd)
        return self.conns[name]

    def send(self, name, frame):
        self._command(cmd="send", name=name, frame=frame)

    def stdin(self, name, text):
        self.send(name, {"Op": "stdin", "Data": text})

    def raw(self, name, data):
        self._command(cmd="raw", name=name, data=data)

    def close(self, name):
        self._command(cmd="close", name=name)

    # --- events -----------------------------------------------------------------------------

    def pump(self, timeout):
        """Records the next event; returns it, or None when none came within `timeout`."""
        try:
            event = self.events.get(timeout=timeout)
        except queue.Empty:
            return None
        assert event is not None, "the node driver ended: %s" % self.proc.stderr.read()[-2000:]
        conn = self.conns.get(event.get("name"))
        if conn is not None:
            if event["event"] == "open":
                conn.transport = event["transport"]
            elif event["event"] == "message":
                conn.frames.append(event["data"])
            elif event["event"] == "close":
                conn.closed = (event["code"], event["reason"])
        return event

    def wait(self, predicate, timeout=15, what="a condition"):
        """Pumps events until predicate() is true; fails after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            assert left > 0, "timed out waiting for %s" % what
            self.pump(min(left, 0.5))

    def wait_output(self, name, text, timeout=15):
        conn = self.conns[name]
        self.wait(lambda: text in conn.output or conn.closed, timeout,
                  "%r in the output of %s" % (text, name))
        assert text in conn.output, "closed %r before %r appeared; output %r" % (
            conn.closed, text, conn.output[-500:])

    def wait_closed(self, name, timeout=15):
        conn = self.conns[name]
        self.wait(lambda: conn.closed is not None, timeout, "%s to close" % name)
        return conn.closed

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._reader.join(5)
        self.proc.stdout.close()
        self.proc.stderr.close()


def new_session(gw, token, namespace, pod, container="main", shell=None):
    """The id of a fresh terminal session (fails the test on any other answer)."""
    params = {"shell": shell} if shell is not None else None
    reply = gw.get(f"/api/v1/pod/{namespace}/{pod}/shell/{container}", token=token,
                   params=params)
    assert reply.status == 200, reply
    return reply.json()["id"]


def sockjs_url(gw, session_id):
    """The address the web UI gives SockJS: the prefix with the session id as query."""
    return f"{gw.url}/api/sockjs?{session_id}"
