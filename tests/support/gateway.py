"""Runs the real gateway (`python -m dashboard_api`) against the local cluster for tests."""

import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

import urllib3

from tests.cluster.procs import free_ports

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Reply:
    def __init__(self, response):
        self.status = response.status
        self.headers = response.headers
        self.data = response.data

    def json(self):
        return json.loads(self.data) if self.data else None

    def __repr__(self):
        return "<Reply %d %r>" % (self.status, self.data[:300])


class Gateway:
    """One gateway process. ``request`` talks to it; ``stop`` ends it."""

    def __init__(self, proc, url, log_path, ca_file=None):
        self.proc = proc
        self.url = url
        self.log_path = log_path
        self.http = urllib3.PoolManager(
            cert_reqs="CERT_REQUIRED" if ca_file else "CERT_NONE", ca_certs=ca_file,
            retries=False, timeout=urllib3.Timeout(connect=5, read=60))

    @classmethod
    def start(cls, cluster, *args, https=False, kubeconfig=True, timeout=30, env=None,
              port=None, apiserver=None):
        """Starts the gateway on `port` (default: a free one) of 127.0.0.1 with `args` added
        to the defaults; `apiserver`: the API server's URL when not the cluster's own (a
        fault proxy in front of it: same CA, same name). `cluster` None: no API server flags
        at all, `args` say where the clusters are (e.g. a --kubeconfig of several contexts)."""
        if port is None:
            [port] = free_ports(1)
        argv = [sys.executable, "-m", "dashboard_api"]
        if cluster is not None:
            argv += ["--apiserver-host", apiserver or cluster.url,
                     "--apiserver-ca-bundle", cluster.ca_file]
        if kubeconfig and cluster is not None:
            argv += ["--kubeconfig", cluster.kubeconfig]
        if https:
            argv += ["--bind-address", "127.0.0.1", "--port", str(port)]
        else:
            argv += ["--insecure-bind-address", "127.0.0.1", "--insecure-port", str(port)]
        argv += list(args)
        audit_dir = None
        if not any(str(a).startswith("--audit-db") for a in args):
            # Each gateway its own audit database, gone with it (tests that keep one across
            # a restart name theirs), never the user's state folder.
            audit_dir = tempfile.mkdtemp(prefix="gateway-audit-")
            argv += ["--audit-db", os.path.join(audit_dir, "audit.db")]
        if not any(str(a).startswith("--drain-period") for a in args):
            argv += ["--drain-period", "0"]  # tests stop gateways often; drain tests say so
        log = tempfile.NamedTemporaryFile(prefix="gateway-", suffix=".log", delete=False)
        proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                env=dict(os.environ, **(env or {})))
        scheme = "https" if https else "http"
        gw = cls(proc, "%s://127.0.0.1:%d" % (scheme, port), log.name)
        gw.port = port
        gw.audit_dir = audit_dir
        # Its own listener: another process may hold the port (a clash the gateway exits on),
        # and a connection alone would take that one for it. The gateway logs the line once it
        # listens.
        serving = "serving %s on 127.0.0.1:%d" % (scheme.upper(), port)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("gateway exited with %s:\n%s" % (proc.returncode, gw.log()))
            try:
                if serving in gw.log(whole=True):
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        return gw
            except OSError:
                pass
            time.sleep(0.1)
        gw.stop()
        raise RuntimeError("gateway did not listen within %ss:\n%s" % (timeout, gw.log()))

    def at(self, prefix):
        """This gateway as seen under a path prefix (a cluster's ``/clusters/{name}``): the
        same process and connections, every path of ``request`` and of the helpers built on
        it (CSRF tokens, terminal sessions, SockJS addresses) taken under the prefix."""
        view = copy.copy(self)
        view.url = self.url + prefix
        return view

    def log(self, whole=False):
        with open(self.log_path, errors="replace") as f:
            text = f.read()
        return text if whole else text[-4000:]

    def request(self, method, path, token=None, body=None, headers=None, params=None,
                raw_body=None, csrf=None):
        """One call; `token` becomes the Bearer header, `body` is sent as JSON.

        `csrf` names an action: a fresh CSRF token for it is fetched and sent first.
        """
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = "Bearer " + token
        data = raw_body
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        if csrf:
            hdrs["X-CSRF-TOKEN"] = self.csrf_token(csrf)
        url = self.url + path
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        return Reply(self.http.request(method, url, body=data, headers=hdrs,
                                       preload_content=True, redirect=False))

    def get(self, path, token=None, **kw):
        return self.request("GET", path, token=token, **kw)

    def wait_cache_synced(self, timeout=30):
        """Waits until no kind of the watch cache is still syncing (/metrics says so): the
        gateway's connections are then all open."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.get("/metrics").data.decode()
            states = re.findall(r'^dashboard_cache_state\{cluster="[^"]+",kind="[^"]+",state="syncing"\} (\S+)$',
                                text, re.M)
            if states and all(float(v) == 0 for v in states):
                return
            time.sleep(0.1)
        raise RuntimeError("the watch cache did not sync within %ss" % timeout)

    def csrf_token(self, action):
        reply = self.request("GET", "/api/v1/csrftoken/" + action)
        assert reply.status == 200, reply
        return reply.json()["token"]

    audit_dir = None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.audit_dir is not None:
            shutil.rmtree(self.audit_dir, ignore_errors=True)
