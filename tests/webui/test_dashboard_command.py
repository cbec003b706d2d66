"""bin/dashboard, the README's run command: with --web-root it serves the UI files and turns
--web-ui-compat on, unless told otherwise."""

import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from tests.cluster.procs import free_ports
from tests.support.gateway import ROOT, Gateway


@pytest.fixture
def dashboard(cluster):
    """Starts bin/dashboard against the test cluster with extra arguments."""
    started = []
    state = tempfile.mkdtemp(prefix="dashboard-state-")

    def start(*args):
        [port] = free_ports(1)
        # --drain-period 0 as Gateway.start's: the default 5 s drain made each stop 5 s.
        argv = [os.path.join(ROOT, "bin", "dashboard"), "--apiserver-host", cluster.url,
                "--apiserver-ca-bundle", cluster.ca_file, "--kubeconfig", cluster.kubeconfig,
                "--drain-period", "0"]
        log = tempfile.NamedTemporaryFile(prefix="dashboard-", suffix=".log", delete=False)
        proc = subprocess.Popen(argv + list(args), cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT,
                                env=dict(os.environ, DASHBOARD_PORT=str(port),
                                         DASHBOARD_STATE_DIR=state))
        gw = Gateway(proc, "http://127.0.0.1:%d" % port, log.name)
        started.append(gw)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, gw.log()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return gw
            except OSError:
                time.sleep(0.1)
        raise AssertionError("bin/dashboard did not listen within 30s:\n" + gw.log())

    start.state = state
    yield start
    for gw in started:
        gw.stop()
    shutil.rmtree(state, ignore_errors=True)


def unauthorized_body(gw):
    reply = gw.get("/api/v1/namespace")
    assert reply.status == 401, reply
    return reply.data


def test_web_root_turns_the_switch_on(dashboard, tmp_path):
    (tmp_path / "index.html").write_text("<title>the UI</title>")
    served = dashboard("--web-root", str(tmp_path))
    page = served.get("/")
    assert page.status == 200 and b"the UI" in page.data
    assert unauthorized_body(served) == b"MSG_LOGIN_UNAUTHORIZED_ERROR"
    # Said explicitly, the flag wins; without a web root the switch stays off.
    explicit = dashboard("--web-root=" + str(tmp_path), "--web-ui-compat=false")
    assert explicit.get("/").status == 200
    assert unauthorized_body(explicit).startswith(b"{")
    plain = dashboard()
    assert unauthorized_body(plain).startswith(b"{")
    # Without a web root, / is the gateway's own home page (tests/webui/test_home_page.py).
    home = plain.get("/")
    assert home.status == 200 and b'<script src="home.js" defer>' in home.data
    # The audit trail is kept in the state folder (across restarts: tests/audit/).
    assert os.path.exists(os.path.join(dashboard.state, "audit.db"))
    assert "audit trail: SQLite %s/audit.db" % dashboard.state in plain.log()


@pytest.mark.parametrize("args,message", [
    (["--demo-clusters", "0"], "--demo-clusters: a number from 1 to 10"),
    (["--demo-clusters=11"], "--demo-clusters: a number from 1 to 10"),
    (["--demo-clusters"], "--demo-clusters N"),
    (["--demo-clusters", "2", "--kubeconfig", "/k"],
     "--demo-clusters starts its own clusters: leave out --kubeconfig and --apiserver-host"),
])
def test_demo_clusters_refuses_what_it_cannot_start(args, message):
    # Refused before anything starts (bin/dashboard --demo-clusters 2 starts two local
    # clusters, which docs/clusters.md shows).
    done = subprocess.run([os.path.join(ROOT, "bin", "dashboard")] + args, cwd=ROOT,
                          capture_output=True, text=True, timeout=10)
    assert (done.returncode, done.stderr.strip()) == (2, message)
