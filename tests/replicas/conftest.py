"""Two gateways sharing one CSRF secret behind Debian's nginx (tests/support/nginx.py).

The tests address only nginx; which replica served a request is read from the replicas' own
logs: a request's ``X-Forwarded-For`` marker shows in its "Incoming" line, a terminal's
fingerprint in the "issued" line of the replica that sealed its id and in the "bound" line of
the one that bound it.
"""

import base64
import itertools
import os
import time

import pytest

from dashboard_api.terminal.sessions import fingerprint
from tests.support.gateway import Gateway
from tests.support.nginx import Nginx
from tests.terminal.conftest import create_pods
from tests.terminal.jsclient import JsClient

# Short enough for the tests, long enough to see that a stopping replica still serves.
DRAIN = "1s"
_markers = itertools.count(1)


class Replicas:
    """The gateways (by index), their common flags, and nginx in front of them."""

    def __init__(self, cluster, key_file, namespace):
        self.cluster = cluster
        self.namespace = namespace  # of their settings ConfigMap
        self.args = ("--csrf-key-file", key_file, "--drain-period", DRAIN,
                     "--namespace", namespace)
        self.gateways = [Gateway.start(cluster, *self.args) for _ in range(2)]
        self.nginx = Nginx.start(["127.0.0.1:%d" % gw.port for gw in self.gateways])
        # The client's view: every request goes through nginx.
        self.front = Gateway(None, self.nginx.url, None)

    def restart(self, index, timeout=30):
        """SIGTERM to a replica; once it has exited, the same replica started again on its
        port, and ready. Returns the seconds the old process took to exit."""
        old = self.gateways[index]
        stopped = time.monotonic()
        old.stop()
        took = time.monotonic() - stopped
        assert old.proc.returncode == 0, old.log()
        new = Gateway.start(self.cluster, *self.args, port=old.port)
        self.gateways[index] = new
        deadline = time.monotonic() + timeout
        while new.get("/readyz").status != 200:  # what a kubelet's probe does
            assert time.monotonic() < deadline, "replica %d not ready: %s" % (index, new.log())
            time.sleep(0.1)
        return took

    def stop(self):
        self.nginx.stop()
        for gw in self.gateways:
            gw.stop()

    # --- which replica served what ------------------------------------------------------------

    def which(self, text, timeout=5):
        """The index of the replica whose log holds `text` (waits a little for it)."""
        deadline = time.monotonic() + timeout
        while True:
            found = [i for i, gw in enumerate(self.gateways) if text in gw.log(whole=True)]
            if found or time.monotonic() > deadline:
                assert len(found) == 1, "%r in the logs of replicas %s" % (text, found)
                return found[0]
            time.sleep(0.05)

    def count(self, text):
        return sum(gw.log(whole=True).count(text) for gw in self.gateways)

    def marked(self, method, path, **kw):
        """A request through nginx with a fresh marker; returns (reply, index of the replica
        that served it)."""
        n = next(_markers)
        marker = "10.%d.%d.%d" % (n >> 16 & 255, n >> 8 & 255, n & 255)
        headers = dict(kw.pop("headers", None) or {}, **{"X-Forwarded-For": marker})
        reply = self.front.request(method, path, headers=headers, **kw)
        return reply, self.which("request from %s\n" % marker)

    def steer_next_to(self, index, attempts=4):
        """Makes `index` serve the request after next (nginx's round robin alternates)."""
        for _ in range(attempts):
            if self.marked("GET", "/api/v1/csrftoken/steer")[1] == index:
                return
        raise AssertionError("round robin never reached replica %d" % index)

    def issued_on(self, session_id):
        return self.which("terminal session %s issued" % fingerprint(session_id))

    def bound_on(self, session_id, transport):
        return self.which("terminal session %s bound over %s" % (fingerprint(session_id),
                                                                 transport))


@pytest.fixture(scope="module")
def replicas(cluster, tmp_path_factory):
    key_file = str(tmp_path_factory.mktemp("csrf") / "key")
    with open(key_file, "w") as f:
        f.write(base64.b64encode(os.urandom(64)).decode())
    namespace = cluster.new_namespace("replica-settings")
    pair = Replicas(cluster, key_file, namespace)
    yield pair
    pair.stop()
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


@pytest.fixture(scope="module")
def web_pod(cluster):
    """A namespace with one Running pod "web" (container "main") that has bash."""
    namespace = cluster.new_namespace("replicas")
    create_pods(cluster, namespace, {"web": "nginx:1.19"})
    yield namespace
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


@pytest.fixture
def js():
    client = JsClient()
    yield client
    client.stop()
