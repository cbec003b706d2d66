"""The node simulator and the metrics stand-in, end to end through the real apiserver."""

import asyncio
import calendar
import json
import re
import time
import urllib.parse

import pytest
import urllib3
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from tests.cluster import metrics_standin
from tests.cluster.nodesim import logs

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$")
EXEC_TIMEOUT = 15


# ---- helpers -------------------------------------------------------------------------------

def make_pod(cluster, namespace, name, containers, annotations=None, init=None, **spec):
    body = {"metadata": {"name": name, "annotations": {
                "sim.dashboard.io/" + k: v for k, v in (annotations or {}).items()}},
            "spec": dict(spec, containers=containers)}
    if init:
        body["spec"]["initContainers"] = init
    # admission refuses pods until the namespace's default service account has its token
    cluster.service_account_token(namespace, "default")
    status, resp = cluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", body)
    assert status == 201, resp.get("message")
    return resp


def get_pod(cluster, namespace, name):
    status, pod = cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")
    return pod if status == 200 else None


def wait_phase(cluster, namespace, name, phase, timeout=30):
    def check():
        pod = get_pod(cluster, namespace, name)
        return pod if pod and pod["status"].get("phase") == phase else None
    return cluster.wait_for(check, timeout=timeout, what=f"{namespace}/{name} {phase}")


def pod_log(cluster, namespace, name, **params):
    status, body = cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}/log",
                                   params={k: str(v) for k, v in params.items()}, raw=True)
    return status, body.decode()


async def run_exec(cluster, namespace, pod, command, container=None, stdin=(), tty=False,
                   resize=None):
    """Exec through the apiserver over WebSocket (v4.channel.k8s.io) as the admin.
    Returns ({channel: bytes}, final status dict)."""
    query = [("command", c) for c in command] + [("stdout", "1")]
    if container:
        query.append(("container", container))
    if stdin:
        query.append(("stdin", "1"))
    query.append(("tty", "1") if tty else ("stderr", "1"))
    url = (cluster.url.replace("https://", "wss://")
           + f"/api/v1/namespaces/{namespace}/pods/{pod}/exec?" + urllib.parse.urlencode(query))

    async def session():
        request = HTTPRequest(url, headers={"Authorization": "Bearer " + cluster.admin_token},
                              ca_certs=cluster.ca_file, connect_timeout=5, request_timeout=10)
        ws = await websocket_connect(request, subprotocols=["v4.channel.k8s.io"])
        assert ws.selected_subprotocol == "v4.channel.k8s.io"
        if resize:
            await ws.write_message(b"\x04" + json.dumps(resize).encode(), binary=True)
        for chunk in stdin:
            await ws.write_message(b"\x00" + chunk, binary=True)
        out, status = {}, None
        while True:
            message = await ws.read_message()
            if message is None:
                return out, status
            channel, data = message[0], message[1:]
            if channel == 3:
                status = json.loads(data)
            else:
                out[channel] = out.get(channel, b"") + data

    return await asyncio.wait_for(session(), EXEC_TIMEOUT)


# ---- nodes ---------------------------------------------------------------------------------

def test_nodes_are_registered_ready_and_leased(cluster):
    for name in cluster.nodes:
        status, node = cluster.request("GET", f"/api/v1/nodes/{name}")
        assert status == 200
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready and ready[0]["status"] == "True"
        assert not [t for t in node["spec"].get("taints") or []
                    if t["key"] == "node.kubernetes.io/not-ready"]
        assert node["status"]["capacity"]["cpu"] == "4"
        assert node["status"]["allocatable"]["memory"] == "8Gi"
        assert node["status"]["nodeInfo"]["kubeletVersion"] == "v1.20.2"
        assert {"type": "InternalIP", "address": "127.0.0.1"} in node["status"]["addresses"]
        port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
        assert port == cluster.kubelet_ports[name]
        status, lease = cluster.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{name}")
        assert status == 200 and lease["spec"]["holderIdentity"] == name
    assert len(set(cluster.kubelet_ports.values())) == len(cluster.nodes)


# ---- pod lifecycle -------------------------------------------------------------------------

def test_pod_becomes_running_with_container_statuses(cluster, namespace):
    make_pod(cluster, namespace, "web",
             [{"name": "nginx", "image": "nginx:1.19", "ports": [{"containerPort": 80}]}],
             init=[{"name": "setup", "image": "busybox"}])
    make_pod(cluster, namespace, "other", [{"name": "c", "image": "nginx"}])
    pod = wait_phase(cluster, namespace, "web", "Running")
    other = wait_phase(cluster, namespace, "other", "Running")
    status = pod["status"]
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "Initialized": "True", "Ready": "True", "ContainersReady": "True",
        "PodScheduled": "True"}
    assert status["hostIP"] == "127.0.0.1"
    assert re.match(r"^10\.\d+\.\d+\.\d+$", status["podIP"])
    assert status["podIP"] != other["status"]["podIP"]
    assert status["startTime"]
    (init,) = status["initContainerStatuses"]
    assert init["state"]["terminated"]["reason"] == "Completed"
    assert init["state"]["terminated"]["exitCode"] == 0
    (c,) = status["containerStatuses"]
    assert c["name"] == "nginx" and c["ready"] and c["started"] and c["restartCount"] == 0
    assert c["image"] == "docker.io/library/nginx:1.19"
    assert c["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert c["containerID"].startswith("containerd://")
    assert c["state"]["running"]["startedAt"]


def test_job_pods_complete_and_deletions_finish(cluster, namespace):
    job = {"metadata": {"name": "once"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox"}]}}}}
    status, resp = cluster.request("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs", job)
    assert status == 201, resp
    cluster.wait_for(lambda: cluster.request(
        "GET", f"/apis/batch/v1/namespaces/{namespace}/jobs/once")[1]["status"].get("succeeded"),
        timeout=30, what="the job to succeed")
    status, pods = cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods")
    (pod,) = pods["items"]
    assert pod["status"]["phase"] == "Succeeded"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"

    make_pod(cluster, namespace, "doomed", [{"name": "c", "image": "nginx"}])
    wait_phase(cluster, namespace, "doomed", "Running")
    started = time.monotonic()
    status, _ = cluster.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/doomed")
    assert status == 200
    cluster.wait_for(lambda: get_pod(cluster, namespace, "doomed") is None, timeout=15,
                     what="the graceful deletion to finish")
    assert time.monotonic() - started < 5


# ---- logs ----------------------------------------------------------------------------------

def test_logs_through_the_apiserver(cluster, namespace):
    make_pod(cluster, namespace, "talker", [{"name": "app", "image": "nginx"}],
             annotations={"log-lines": "10"})
    wait_phase(cluster, namespace, "talker", "Running")

    status, text = pod_log(cluster, namespace, "talker", tailLines=3, timestamps="true")
    assert status == 200, text
    lines = text.splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["line 8", "line 9", "line 10"]
    assert all(TS.match(line.split(" ", 1)[0]) for line in lines)

    status, text = pod_log(cluster, namespace, "talker")
    assert text.splitlines()[0].startswith("starting container app")
    assert text.splitlines()[-1] == "line 10"

    status, text = pod_log(cluster, namespace, "talker", limitBytes=10)
    assert status == 200 and len(text) == 10

    # sinceTime reaches the kubelet with second precision: wait for the next second first
    time.sleep(1.05 - time.time() % 1)
    stamps = cluster.append_log(namespace, "talker", "app", ["late 1", "late 2"])
    since = stamps[0][:19] + "Z"
    status, text = pod_log(cluster, namespace, "talker", sinceTime=since)
    assert text.splitlines() == ["late 1", "late 2"]

    status, text = pod_log(cluster, namespace, "talker", previous="true")
    assert status == 400
    assert json.loads(text)["message"] == \
        'previous terminated container "app" in pod "talker" not found'


def test_follow_streams_appended_lines(cluster, namespace):
    make_pod(cluster, namespace, "follow", [{"name": "app", "image": "nginx"}])
    wait_phase(cluster, namespace, "follow", "Running")
    http = urllib3.PoolManager(ca_certs=cluster.ca_file)
    path = f"/api/v1/namespaces/{namespace}/pods/follow/log?follow=true&tailLines=0"
    resp = http.request(
        "GET", cluster.url + path,
        headers={"Authorization": "Bearer " + cluster.admin_token}, preload_content=False,
        timeout=urllib3.Timeout(connect=5, read=10))
    try:
        assert resp.status == 200
        cluster.append_log(namespace, "follow", "app", ["fresh line"])
        received = b""
        deadline = time.monotonic() + 10
        while b"fresh line\n" not in received and time.monotonic() < deadline:
            received += resp.read1(1024)
        assert received == b"fresh line\n"
    finally:
        resp.release_conn()
        http.clear()


def test_follow_ends_when_the_container_ends(cluster, namespace):
    make_pod(cluster, namespace, "brief", [{"name": "app", "image": "nginx"}],
             annotations={"run-seconds": "2"}, restartPolicy="Never")
    wait_phase(cluster, namespace, "brief", "Running")
    started = time.monotonic()
    status, text = pod_log(cluster, namespace, "brief", follow="true")
    assert status == 200
    assert text.splitlines()[-1] == "finished"
    assert time.monotonic() - started < 10
    wait_phase(cluster, namespace, "brief", "Succeeded")


def test_crash_loop_has_restarts_and_previous_logs(cluster, namespace):
    make_pod(cluster, namespace, "crasher",
             [{"name": "app", "image": "busybox"}, {"name": "side", "image": "busybox"}],
             annotations={"crashloop": "app"})

    def restarted():
        pod = get_pod(cluster, namespace, "crasher")
        statuses = (pod or {}).get("status", {}).get("containerStatuses", [])
        app = {s["name"]: s for s in statuses}.get("app")
        return app if app and app["restartCount"] > 0 else None

    app = cluster.wait_for(restarted, timeout=30, what="a restart of the crash-looping container")
    assert app["lastState"]["terminated"]["exitCode"] == 1
    assert app["lastState"]["terminated"]["reason"] == "Error"
    status, text = pod_log(cluster, namespace, "crasher", container="app", previous="true")
    assert status == 200, text
    assert "simulated crash" in text.splitlines()[-1]
    pod = get_pod(cluster, namespace, "crasher")
    side = [s for s in pod["status"]["containerStatuses"] if s["name"] == "side"][0]
    assert side["restartCount"] == 0 and "running" in side["state"]


def test_log_options_on_raw_lines(tmp_path):
    state = str(tmp_path)
    stamps = logs.append_log(state, "ns", "pod", "c", ["one", "two", "three"])
    assert stamps == sorted(set(stamps)) and all(TS.match(s) for s in stamps)
    with open(logs.log_path(state, "ns", "pod", "c", 0), "rb") as f:
        lines = logs.complete_lines(f.read() + b"partial")
    assert len(lines) == 3
    assert logs.LogFilter().render(logs.last_lines(lines, 2)) == b"two\nthree\n"
    assert logs.LogFilter().render(logs.last_lines(lines, 0)) == b""
    assert logs.LogFilter(limit_bytes=6).render(lines) == b"one\ntw"
    since = logs.parse_ts(stamps[1])
    assert logs.LogFilter(since_ns=since).render(lines) == b"two\nthree\n"
    assert logs.LogFilter(timestamps=True).render(lines[:1]) == f"{stamps[0]} one\n".encode()
    assert logs.parse_ts("2021-01-02T03:04:05+01:00") == logs.parse_ts("2021-01-02T02:04:05Z")


# ---- exec ----------------------------------------------------------------------------------

# An exec test's budget covers its blocking setup waits (service account token and Running,
# 30 s each) and each exec's own bound.
@pytest.mark.gen_test(timeout=60 + 2 * EXEC_TIMEOUT + 10)
async def test_exec_returns_command_output(cluster, namespace):
    make_pod(cluster, namespace, "box", [{"name": "main", "image": "nginx"}])
    wait_phase(cluster, namespace, "box", "Running")
    out, status = await run_exec(cluster, namespace, "box", ["echo", "hello"])
    assert out.get(1) == b"hello\n"
    assert status == {"metadata": {}, "status": "Success"}

    out, status = await run_exec(cluster, namespace, "box", ["sh", "-c", "echo oops >&2; exit 3"])
    assert out.get(2) == b"oops\n"
    assert status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]


@pytest.mark.gen_test(timeout=60 + EXEC_TIMEOUT + 10)
async def test_exec_in_a_terminal_with_resize(cluster, namespace):
    make_pod(cluster, namespace, "term", [{"name": "main", "image": "nginx"}])
    wait_phase(cluster, namespace, "term", "Running")
    # the resize frame goes first, so the shell reads the command in a resized terminal
    out, status = await run_exec(cluster, namespace, "term", ["bash"], tty=True,
                                 resize={"Width": 123, "Height": 45},
                                 stdin=[b"stty size; exit 4\r"])
    assert b"\r45 123\r\n" in out.get(1, b"")
    assert 2 not in out  # a terminal has no separate stderr
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "4"}]


@pytest.mark.gen_test(timeout=60 + 3 * EXEC_TIMEOUT + 10)
async def test_image_decides_the_shells(cluster, namespace):
    make_pod(cluster, namespace, "tiny", [{"name": "bb", "image": "busybox:1.32"},
                                          {"name": "dl", "image": "gcr.io/distroless/static"}])
    wait_phase(cluster, namespace, "tiny", "Running")
    _, status = await run_exec(cluster, namespace, "tiny", ["bash"], container="bb")
    assert status["status"] == "Failure"
    assert 'exec: "bash": executable file not found in $PATH' in status["message"]
    out, status = await run_exec(cluster, namespace, "tiny", ["sh", "-c", "echo from-sh"],
                                 container="bb")
    assert out.get(1) == b"from-sh\n" and status["status"] == "Success"
    _, status = await run_exec(cluster, namespace, "tiny", ["sh"], container="dl")
    assert "executable file not found" in status["message"]


# ---- metrics -------------------------------------------------------------------------------

def metrics_get(cluster, path):
    http = urllib3.PoolManager()
    try:
        resp = http.request("GET", cluster.metrics_url + metrics_standin.BASE + path,
                            timeout=urllib3.Timeout(total=10))
        return resp.status, json.loads(resp.data)
    finally:
        http.clear()


def test_metrics_standin_reports_running_pods_and_nodes(cluster, namespace):
    make_pod(cluster, namespace, "busy", [{"name": "a", "image": "nginx"},
                                          {"name": "b", "image": "nginx"}])
    wait_phase(cluster, namespace, "busy", "Running")

    status, body = metrics_get(cluster, f"/namespaces/{namespace}/pods/busy")
    assert status == 200 and body["kind"] == "PodMetrics"
    t = calendar.timegm(time.strptime(body["timestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    for container in body["containers"]:
        cpu, memory = metrics_standin.usage(f"{namespace}/busy/{container['name']}", t)
        assert container["usage"] == {"cpu": f"{cpu}n", "memory": f"{memory // 1024}Ki"}
    assert sorted(c["name"] for c in body["containers"]) == ["a", "b"]

    status, body = metrics_get(cluster, f"/namespaces/{namespace}/pods")
    assert [item["metadata"]["name"] for item in body["items"]] == ["busy"]

    status, body = metrics_get(cluster, "/nodes")
    assert status == 200
    assert sorted(item["metadata"]["name"] for item in body["items"]) == sorted(cluster.nodes)
    assert all(item["usage"]["cpu"].endswith("n") for item in body["items"])

    status, body = metrics_get(cluster, f"/namespaces/{namespace}/pods/missing")
    assert status == 404 and body["reason"] == "NotFound"
