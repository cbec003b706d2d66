"""Streams end plainly (issue 27, item 4): a shell whose exec connection to the cluster breaks
is closed with a frame that says so (code 2 and why, after a toast), not ``Process exited``,
within seconds; a reset at once, a silently dropped connection once a ping goes unanswered."""

import time

import pytest

from dashboard_api.terminal.terminal import LOST
from tests.faults.conftest import FLAGS
from tests.faults.proxy import FaultProxy
from tests.support.gateway import Gateway
from tests.terminal.conftest import CONTAINER, create_pods
from tests.terminal.jsclient import JsClient, new_session, sockjs_url

PING = 1.0   # --exec-ping-interval in these tests
# Tornado's client, closing a WebSocket whose ping went unanswered, waits this long for the
# server's close frame before it drops the connection.
CLOSE_WAIT = 5.0


@pytest.fixture
def js():
    client = JsClient()
    yield client
    client.stop()


@pytest.fixture(scope="module")
def shell_pod(cluster):
    namespace = cluster.new_namespace("faultterm")
    create_pods(cluster, namespace, {"web": "nginx:1.19"})
    yield namespace
    cluster.request("DELETE", "/api/v1/namespaces/" + namespace)


def open_shell(js, gw, token, namespace, name):
    session_id = new_session(gw, token, namespace, "web", CONTAINER)
    conn = js.open(name, sockjs_url(gw, session_id), bind=session_id)
    js.wait(lambda: conn.transport or conn.closed, 15, "%s to open" % name)
    js.stdin(name, "echo up-$((6*7))\r")
    js.wait_output(name, "up-42")
    return conn


@pytest.mark.parametrize("fault", ["reset", "drop"])
def test_a_broken_exec_connection_closes_the_terminal_saying_so(cluster, shell_pod, js, fault):
    with FaultProxy.in_front_of(cluster.url) as proxy:
        gw = Gateway.start(cluster, *FLAGS, "--exec-ping-interval=%gs" % PING,
                           "--watch-cache=false", apiserver=proxy.url)
        try:
            conn = open_shell(js, gw, cluster.admin_token, shell_pod, "t")
            getattr(proxy, fault)()
            broke = time.monotonic()
            closed = js.wait_closed("t", timeout=2 * PING + CLOSE_WAIT + 5)
            took = time.monotonic() - broke
            print("terminal, exec connection %s: closed after %.1fs with %r"
                  % (fault, took, closed))
            assert closed == (2, LOST), closed
            assert {"Op": "toast", "Data": LOST} in [
                {"Op": f.get("Op"), "Data": f.get("Data")} for f in conn.frames]
            assert took < 2 * PING + CLOSE_WAIT + 2
            # A new terminal works: nothing was left stuck. After a silent drop, the first call
            # may meet a pooled connection that went silent too: it is a JSON 504 at its
            # deadline, and the pool's other idle connections go with it.
            proxy.passing()
            first = gw.get("/api/v1/pod/%s/web/shell/%s" % (shell_pod, CONTAINER),
                           token=cluster.admin_token)
            if fault == "drop" and first.status != 200:
                assert first.status == 504 and first.json()["reason"] == "Timeout", first
                assert "outcome" not in first.json()["message"]   # a review changes nothing
            else:
                assert first.status == 200, first
            open_shell(js, gw, cluster.admin_token, shell_pod, "again")
        finally:
            gw.stop()
