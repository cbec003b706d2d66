"""Terminals and CSRF tokens across two replicas behind nginx: the shell call lands on one
replica, the SockJS transport on the other, and the terminal works (no sticky sessions)."""

import json
import time
import uuid

import pytest

from dashboard_api.serving.lifecycle import RESTARTING
from tests.terminal.jsclient import new_session, sockjs_url

EXITED = (1, "Process exited")
UNKNOWN = (2, "unknown or expired terminal session")
# sockjs-client's transport names -> sockjs-tornado's
TRANSPORTS = {"websocket": "websocket", "xhr-streaming": "xhr_streaming"}


def open_across(js, replicas, token, namespace, transport, name="t", attempts=12):
    """A terminal whose id was issued by one replica and bound on the other; returns
    (conn, session id, issuing replica, binding replica). Which replica nginx picks is left to
    it: an attempt lands across about half the time (6 attempts once all landed on one)."""
    for attempt in range(attempts):
        session_id = new_session(replicas.front, token, namespace, "web")
        issuer = replicas.issued_on(session_id)
        if attempt % 2 == 0:
            # nginx alternates: the shell call, /info and the websocket would otherwise put the
            # call and the websocket on one replica.
            replicas.front.get("/healthz")
        conn = js.open(name, sockjs_url(replicas.front, session_id), bind=session_id,
                       transports=[transport])
        js.wait(lambda: conn.transport or conn.closed, 15, "%s to open" % name)
        assert conn.closed is None and conn.transport == transport, conn.closed
        binder = replicas.bound_on(session_id, TRANSPORTS[transport])
        if binder != issuer:
            return conn, session_id, issuer, binder
        js.close(name)
        js.wait_closed(name)
    raise AssertionError("no terminal crossed replicas in %d attempts" % attempts)


@pytest.mark.parametrize("transport", ["websocket", "xhr-streaming"])
def test_a_shell_issued_by_one_replica_runs_on_the_other(js, replicas, admin_token, web_pod,
                                                         transport):
    conn, _, issuer, binder = open_across(js, replicas, admin_token, web_pod, transport)
    assert issuer != binder
    js.stdin("t", "echo across-$((6*7))\r")
    js.wait_output("t", "across-42")
    ended = "terminal in %s/web/main ended: 1 Process exited" % web_pod
    before = [gw.log(whole=True).count(ended) for gw in replicas.gateways]
    js.stdin("t", "exit\r")
    assert js.wait_closed("t") == EXITED
    after = [gw.log(whole=True).count(ended) for gw in replicas.gateways]
    assert after[binder] == before[binder] + 1 and after[issuer] == before[issuer]


def test_a_csrf_token_of_one_replica_is_spent_on_the_other(cluster, replicas, admin_token):
    for _ in range(6):
        token_reply, issuer = replicas.marked("GET", "/api/v1/csrftoken/namespace")
        assert token_reply.status == 200, token_reply
        name = "across-" + uuid.uuid4().hex[:8]
        created, spender = replicas.marked(
            "POST", "/api/v1/namespace", token=admin_token, body={"name": name},
            headers={"X-CSRF-TOKEN": token_reply.json()["token"]})
        assert created.status in (200, 201), created
        status, body = cluster.request("GET", "/api/v1/namespaces/" + name)
        assert status == 200 and body["metadata"]["name"] == name
        cluster.request("DELETE", "/api/v1/namespaces/" + name)
        if spender != issuer:
            return
    raise AssertionError("the token was never spent on the other replica")


def test_settings_saved_on_one_replica_then_on_the_other(cluster, replicas, admin_token):
    path = "/api/v1/namespaces/%s/configmaps/kubernetes-dashboard-settings" % replicas.namespace

    def stored():
        status, body = cluster.request("GET", path)
        assert status == 200, body
        return json.loads(body["data"]["settings"])["clusterName"]

    for _ in range(2):  # both replicas read them, as the web UI does when it starts
        assert replicas.front.get("/settings").status == 200
    first, saver = replicas.marked("PUT", "/settings", token=admin_token,
                                   body={"clusterName": "first"})
    assert first.status == 204, first
    for attempt in range(4):
        name = "second-%d" % attempt
        second, other = replicas.marked("PUT", "/settings", token=admin_token,
                                        body={"clusterName": name})
        assert second.status == 204, second  # its own earlier save is no conflict
        assert stored() == name
        if other != saver:
            break
    else:
        raise AssertionError("the second save never reached the other replica")
    # A change made around the gateways is still refused until it is read.
    edit = {"data": {"settings": '{"clusterName": "kubectl"}'}}
    status, _ = cluster.request("PATCH", path, edit)
    assert status == 200
    refused, _ = replicas.marked("PUT", "/settings", token=admin_token,
                                 body={"clusterName": "third"})
    assert refused.status == 409, refused
    assert refused.json()["message"] == "settings changed since last reload"
    assert stored() == "kubectl"


def test_replayed_expired_and_altered_ids_start_nothing(js, replicas, admin_token, web_pod):
    expired = new_session(replicas.front, admin_token, web_pod, "web")
    issued = time.monotonic()
    # Replayed: refused by the replica that bound it.
    first, session_id, _, binder = open_across(js, replicas, admin_token, web_pod,
                                               "websocket", name="first")
    js.stdin("first", "echo first-$((3+4))\r")
    js.wait_output("first", "first-7")
    replicas.steer_next_to(binder)  # SockJS's /info goes to the other, the websocket here
    js.open("replay", sockjs_url(replicas.front, session_id), bind=session_id,
            transports=["websocket"])
    assert js.wait_closed("replay") == UNKNOWN
    assert replicas.which("terminal session %s refused over websocket"
                          % _fp(session_id)) == binder
    # Altered in one character: refused wherever it lands.
    middle = len(session_id) // 2
    altered = session_id[:middle] + ("A" if session_id[middle] != "A" else "B") + \
        session_id[middle + 1:]
    js.open("altered", sockjs_url(replicas.front, altered), bind=altered)
    assert js.wait_closed("altered") == UNKNOWN
    # Expired: refused after 10 seconds from its issue time, wherever it lands.
    time.sleep(max(0.0, issued + 10.3 - time.monotonic()))
    js.open("expired", sockjs_url(replicas.front, expired), bind=expired)
    assert js.wait_closed("expired") == UNKNOWN
    for refused in (altered, expired):
        assert replicas.count("terminal session %s refused" % _fp(refused)) == 1
        assert replicas.count("terminal session %s bound" % _fp(refused)) == 0
    assert replicas.count("terminal session %s bound" % _fp(session_id)) == 1
    assert first.closed is None  # the replays took nothing from the bound terminal
    js.stdin("first", "echo still-$((2+2))\r")
    js.wait_output("first", "still-4")


def _fp(session_id):
    from dashboard_api.terminal.sessions import fingerprint
    return fingerprint(session_id)


def test_a_stopping_replicas_terminal_ends_with_a_toast(js, replicas, admin_token, web_pod):
    conn, _, _, binder = open_across(js, replicas, admin_token, web_pod, "websocket")
    js.stdin("t", "echo before-$((1+1))\r")
    js.wait_output("t", "before-2")
    stopping = replicas.gateways[binder]
    stopped = time.monotonic()
    stopping.proc.send_signal(15)
    assert js.wait_closed("t", timeout=10) == (2, RESTARTING)
    assert time.monotonic() - stopped < 5  # the drain period (1 s), then the toast: no hang
    toasts = [f for f in conn.frames if isinstance(f, dict) and f.get("Op") == "toast"]
    assert toasts == [{"Op": "toast", "Data": RESTARTING, "SessionID": "", "Rows": 0,
                       "Cols": 0}]
    replicas.restart(binder)
    # The other replica kept serving, and the restarted one serves again.
    conn, _, _, _ = open_across(js, replicas, admin_token, web_pod, "websocket", name="again")
    js.stdin("again", "echo after-$((2+3))\r")
    js.wait_output("again", "after-5")
