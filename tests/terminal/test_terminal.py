"""Terminal sessions end to end: the real sockjs-client (node) -> the gateway -> the real API
server -> the node simulator's exec (real processes in a pty)."""

import os
import re
import secrets
import time

import pytest

from dashboard_api.terminal.sessions import PENDING_PER_CALLER
from tests.terminal.conftest import CONTAINER
from tests.terminal.jsclient import new_session, sockjs_url

EXITED = (1, "Process exited")
UNKNOWN = (2, "unknown or expired terminal session")
NO_BIND = (2, "no terminal session bound within 5 seconds")
# The shell's own answer, never the terminal's echo of the typed line.
WHICH_SHELL = 'echo "shell-is-[$0]-bash[${BASH_VERSION:+yes}]"\r'


def open_terminal(js, gateway, token, namespace, pod, name="t", shell=None, transports=None,
                  rows=24, cols=80):
    session_id = new_session(gateway, token, namespace, pod, CONTAINER, shell)
    conn = js.open(name, sockjs_url(gateway, session_id), bind=session_id,
                   transports=transports, rows=rows, cols=cols)
    js.wait(lambda: conn.transport or conn.closed, 15, "%s to open" % name)
    assert conn.closed is None, conn.closed
    return conn


def host_processes(fragment):
    """PIDs on this machine whose command line holds `fragment` (the simulator's processes)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if fragment in cmdline:
            found.append(pid)
    return found


@pytest.mark.parametrize("transport", ["websocket", "xhr-streaming", "xhr-polling", "eventsource"])
def test_echo_in_a_real_shell(js, gateway, admin_token, shell_pods, transport):
    conn = open_terminal(js, gateway, admin_token, shell_pods, "web", transports=[transport])
    assert conn.transport == transport
    js.stdin("t", "echo out-$((6*7))\r")
    js.wait_output("t", "out-42")
    frame = next(f for f in conn.frames if "out-42" in f.get("Data", ""))
    assert frame == {"Op": "stdout", "Data": frame["Data"], "SessionID": "", "Rows": 0, "Cols": 0}
    js.stdin("t", "exit\r")
    assert js.wait_closed("t") == EXITED


def test_resize_reaches_the_process(js, gateway, admin_token, shell_pods):
    open_terminal(js, gateway, admin_token, shell_pods, "web", rows=31, cols=97)
    js.stdin("t", "stty size\r")
    js.wait_output("t", "31 97")
    js.send("t", {"Op": "resize", "Rows": 50, "Cols": 132})
    js.stdin("t", "stty size\r")
    js.wait_output("t", "50 132")


@pytest.mark.parametrize("pod,shell,expected", [
    ("web", None, "shell-is-[/usr/bin/bash]-bash[yes]"),
    ("box", None, "shell-is-[/usr/bin/sh]-bash[]"),   # no bash on busybox: falls back to sh
    ("web", "sh", "shell-is-[/usr/bin/sh]-bash[]"),
    ("web", "nonsense", "shell-is-[/usr/bin/bash]-bash[yes]"),  # unknown: the usual order
])
def test_shell_selection(js, gateway, admin_token, shell_pods, pod, shell, expected):
    open_terminal(js, gateway, admin_token, shell_pods, pod, shell=shell)
    # Typed at once: keystrokes sent while a missing shell fails reach the next one.
    js.stdin("t", WHICH_SHELL)
    js.wait_output("t", expected)


def test_shell_less_image_closes_with_code_2(js, gateway, admin_token, shell_pods):
    open_terminal(js, gateway, admin_token, shell_pods, "bare")
    code, reason = js.wait_closed("t")
    assert code == 2
    # the last shell tried; its quotes survive the SockJS close frame
    assert 'exec: "cmd": executable file not found in $PATH' in reason


def test_asked_shell_missing_closes_with_code_2(js, gateway, admin_token, shell_pods):
    open_terminal(js, gateway, admin_token, shell_pods, "box", shell="bash")
    code, reason = js.wait_closed("t")
    assert code == 2
    assert 'exec: "bash": executable file not found' in reason


def test_exit_closes_with_code_1_even_with_an_exit_status(js, gateway, admin_token,
                                                          shell_pods):
    conn = open_terminal(js, gateway, admin_token, shell_pods, "web")
    js.stdin("t", "echo bye-$((2*3)); exit 3\r")
    assert js.wait_closed("t") == EXITED
    # A shell that ran and failed is not "no shell": sh was not started after it.
    assert "bye-6" in conn.output


def test_unbound_session_is_removed_after_10_seconds(js, gateway, admin_token, shell_pods):
    early = new_session(gateway, admin_token, shell_pods, "web")
    late = new_session(gateway, admin_token, shell_pods, "web")
    issued = time.monotonic()
    time.sleep(8.5)
    js.open("early", sockjs_url(gateway, early), bind=early)
    js.stdin("early", "echo in-time-$((1+1))\r")
    js.wait_output("early", "in-time-2")
    time.sleep(max(0.0, issued + 10.5 - time.monotonic()))
    js.open("late", sockjs_url(gateway, late), bind=late)
    assert js.wait_closed("late") == UNKNOWN


def test_session_id_binds_once(js, gateway, admin_token, shell_pods):
    session_id = new_session(gateway, admin_token, shell_pods, "web")
    js.open("first", sockjs_url(gateway, session_id), bind=session_id)
    js.stdin("first", "echo first-$((3+4))\r")
    js.wait_output("first", "first-7")
    js.open("second", sockjs_url(gateway, session_id), bind=session_id)
    assert js.wait_closed("second") == UNKNOWN


@pytest.mark.parametrize("first", [
    {"Op": "stdin", "Data": "ls\r"},
    {"Op": "bind", "SessionID": "0" * 32},
    "not json at all",
])
def test_first_frame_must_bind_a_known_session(js, gateway, first):
    conn = js.open("t", sockjs_url(gateway, "x"))
    js.wait(lambda: conn.transport, 15, "open")
    if isinstance(first, str):
        js.raw("t", first)
    else:
        js.send("t", first)
    assert js.wait_closed("t") == UNKNOWN


def test_bind_is_case_insensitive(js, gateway, admin_token, shell_pods):
    session_id = new_session(gateway, admin_token, shell_pods, "web")
    conn = js.open("t", sockjs_url(gateway, session_id))
    js.wait(lambda: conn.transport, 15, "open")
    js.send("t", {"op": "BIND", "sessionid": session_id})
    js.send("t", {"OP": "stdin", "DATA": "echo case-$((5*5))\r"})
    js.wait_output("t", "case-25")


def test_broken_frame_after_bind_ends_the_process(js, gateway, admin_token, shell_pods):
    open_terminal(js, gateway, admin_token, shell_pods, "web")
    js.stdin("t", "echo ready-$((4*4))\r")
    js.wait_output("t", "ready-16")
    js.raw("t", "{broken")
    assert js.wait_closed("t") == EXITED


def test_closing_the_browser_side_ends_the_process(js, gateway, admin_token, shell_pods):
    marker = "sleep %d" % (7_000_000 + secrets.randbelow(1_000_000))
    open_terminal(js, gateway, admin_token, shell_pods, "web")
    js.stdin("t", marker + "\r")
    deadline = time.monotonic() + 10
    while not host_processes(marker):
        assert time.monotonic() < deadline, "the shell did not start %r" % marker
        time.sleep(0.1)
    js.close("t")
    deadline = time.monotonic() + 10
    while host_processes(marker):
        assert time.monotonic() < deadline, "%r still runs after the browser left" % marker
        time.sleep(0.1)


def test_exec_path_form(js, gateway, admin_token, shell_pods):
    reply = gateway.get(f"/api/v1/exec/{shell_pods}/web/{CONTAINER}", token=admin_token,
                        params={"shell": "sh"})
    assert reply.status == 200, reply
    session_id = reply.json()["id"]
    # Sealed (serving/sealing.py): URL-safe, and no trace of the token in it.
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,4000}", session_id), session_id
    assert admin_token not in session_id
    js.open("t", sockjs_url(gateway, session_id), bind=session_id)
    js.stdin("t", WHICH_SHELL)
    js.wait_output("t", "shell-is-[/usr/bin/sh]")


def test_many_sessions_at_once(js, gateway, admin_token, shell_pods):
    count = 50
    # One after the other, as the web UI opens them: a caller's ids waiting for their bind
    # are limited (sessions.PENDING_PER_CALLER), open terminals far less.
    for n in range(count):
        session_id = new_session(gateway, admin_token, shell_pods, "web")
        conn = js.open("s%d" % n, sockjs_url(gateway, session_id), bind=session_id)
        js.wait(lambda: conn.transport or conn.closed, 15, "s%d to open" % n)
    for n in range(count):
        js.stdin("s%d" % n, "echo n-$((%d*1000+7))\r" % n)
    for n in range(count):
        js.wait_output("s%d" % n, "n-%d" % (n * 1000 + 7), timeout=60)
    for n in range(count):
        js.stdin("s%d" % n, "exit\r")
    for n in range(count):
        assert js.wait_closed("s%d" % n, timeout=30) == EXITED


def test_a_connection_that_binds_nothing_is_closed_after_5_seconds(js, gateway, admin_token,
                                                                  shell_pods):
    # Heartbeats would keep these open for ever; each holds a socket of the gateway.
    for transport in ("websocket", "xhr-polling"):
        js.open(transport, sockjs_url(gateway, "x"), transports=[transport])
    open_terminal(js, gateway, admin_token, shell_pods, "web", name="bound")
    opened = time.monotonic()
    js.wait(lambda: all(js.conns[t].transport for t in ("websocket", "xhr-polling")), 15,
            "the unbound connections to open")
    for transport in ("websocket", "xhr-polling"):
        assert js.wait_closed(transport, timeout=15) == NO_BIND
    assert time.monotonic() - opened > 4.5
    js.stdin("bound", "echo still-here-$((8*8))\r")  # a bound connection has no deadline
    js.wait_output("bound", "still-here-64")
    assert js.conns["bound"].closed is None


# --- the shell-session endpoint's HTTP answers -----------------------------------------------

def shell_path(namespace, pod="web", container=CONTAINER):
    return f"/api/v1/pod/{namespace}/{pod}/shell/{container}"


def test_no_token_is_401(gateway, shell_pods):
    reply = gateway.get(shell_path(shell_pods))
    assert reply.status == 401
    assert reply.json()["reason"] == "Unauthorized"
    assert gateway.get(shell_path(shell_pods), headers={"Authorization": "Bearer "}).status == 401


def test_invalid_token_is_401(gateway, shell_pods):
    assert gateway.get(shell_path(shell_pods), token="not-a-token").status == 401


@pytest.mark.parametrize("namespace,pod,container", [
    ("Bad_NS", "web", "main"), ("{ns}", "web..x", "main"), ("{ns}", "web", "Main!"),
])
def test_bad_names_are_400(gateway, admin_token, shell_pods, namespace, pod, container):
    reply = gateway.get(shell_path(namespace.format(ns=shell_pods), pod, container),
                        token=admin_token)
    assert reply.status == 400, reply
    assert reply.json()["reason"] == "BadRequest"


def test_without_pods_exec_right_is_403(gateway, norights_token, shell_pods):
    reply = gateway.get(shell_path(shell_pods), token=norights_token)
    assert reply.status == 403, reply
    body = reply.json()
    assert body["reason"] == "Forbidden" and body["code"] == 403
    assert 'User "nobody" cannot create resource "pods/exec"' in body["message"]
    assert shell_pods in body["message"]
    assert "id" not in body


def test_rights_elsewhere_are_403(gateway, cluster, editor_token, shell_pods):
    # The editor may exec in team-a only.
    reply = gateway.get(f"/api/v1/exec/{shell_pods}/web/{CONTAINER}", token=editor_token)
    assert reply.status == 403, reply
    assert 'User "editor" cannot create resource "pods/exec"' in reply.json()["message"]


def test_missing_pod_is_404(gateway, admin_token, shell_pods):
    reply = gateway.get(shell_path(shell_pods, pod="nope"), token=admin_token)
    assert reply.status == 404, reply
    assert reply.json()["reason"] == "NotFound"


def test_missing_container_is_404(gateway, admin_token, shell_pods):
    reply = gateway.get(shell_path(shell_pods, container="sidecar"), token=admin_token)
    assert reply.status == 404, reply
    assert 'container "sidecar" not found' in reply.json()["message"]


@pytest.fixture(scope="module")
def exec_user(cluster, shell_pods):
    """The token of a service account that may exec in the shell pods' namespace: a caller of
    its own, so that filling its session limit disturbs no other test."""
    name = "shell-user"
    status, body = cluster.request("POST", f"/api/v1/namespaces/{shell_pods}/serviceaccounts",
                                   {"metadata": {"name": name}})
    assert status == 201, body
    status, body = cluster.request(
        "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{shell_pods}/rolebindings", {
            "metadata": {"name": name + "-edit"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "edit"},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": shell_pods}]})
    assert status == 201, body
    token = cluster.service_account_token(shell_pods, name)
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"namespace": shell_pods, "verb": "create",
                                              "resource": "pods", "subresource": "exec"}}}
    cluster.wait_for(lambda: cluster.request(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review,
        token=token)[1].get("status", {}).get("allowed"), timeout=30, what="exec right")
    return token


def test_waiting_sessions_are_limited_per_caller(js, gateway, admin_token, shell_pods,
                                                 exec_user):
    waiting = [new_session(gateway, exec_user, shell_pods, "web")
               for _ in range(PENDING_PER_CALLER)]
    for path in (shell_path(shell_pods), f"/api/v1/exec/{shell_pods}/web/{CONTAINER}"):
        reply = gateway.get(path, token=exec_user)
        assert reply.status == 429, reply
        body = reply.json()
        assert body["reason"] == "TooManyRequests" and body["code"] == 429
        assert body["status"] == "Failure" and "waiting" in body["message"]
        assert "id" not in body
    # Another caller is not affected.
    new_session(gateway, admin_token, shell_pods, "web")
    # A bind frees exactly one place: the refused requests created nothing.
    js.open("t", sockjs_url(gateway, waiting[0]), bind=waiting[0])
    js.stdin("t", "echo bound-$((2+5))\r")
    js.wait_output("t", "bound-7")
    new_session(gateway, exec_user, shell_pods, "web")
    assert gateway.get(shell_path(shell_pods), token=exec_user).status == 429
