"""End-to-end checks of the local cluster, through the real apiserver."""
import os
import secrets
import socket
import subprocess
import sys

import pytest
import yaml

from tests.cluster import controlplane, workloads
from tests.cluster.controlplane import ClusterStartError, LocalCluster
from tests.cluster.procs import free_ports


def _running_pods(cluster, ns, selector):
    status, pods = cluster.request("GET", f"/api/v1/namespaces/{ns}/pods",
                                   params={"labelSelector": selector})
    assert status == 200
    return [p for p in pods["items"] if p["status"].get("phase") == "Running"]


def test_nobody_is_forbidden_everything(cluster, norights_token):
    for path in ("/api/v1/namespaces/default/pods", "/api/v1/pods", "/api/v1/namespaces",
                 f"/api/v1/namespaces/{cluster.editor_namespace}/pods"):
        status, body = cluster.request("GET", path, token=norights_token)
        assert status == 403, path
        assert 'User "nobody"' in body["message"]


def test_unknown_token_is_unauthorized(cluster):
    status, _ = cluster.request("GET", "/api/v1/pods", token="not-a-token")
    assert status == 401


def test_editor_works_in_its_namespace(cluster, editor_token):
    ns = cluster.editor_namespace
    name = "cm-" + secrets.token_hex(3)
    path = f"/api/v1/namespaces/{ns}/configmaps"
    status, _ = cluster.request("POST", path, {"metadata": {"name": name}, "data": {"k": "v"}},
                                token=editor_token)
    assert status == 201
    try:
        status, body = cluster.request("GET", path, token=editor_token)
        assert status == 200
        assert name in [i["metadata"]["name"] for i in body["items"]]
        status, _ = cluster.request("GET", f"/api/v1/namespaces/{ns}/pods", token=editor_token)
        assert status == 200
    finally:
        cluster.request("DELETE", f"{path}/{name}")


def test_editor_is_confined_to_its_namespace(cluster, editor_token, namespace):
    status, _ = cluster.request("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                                {"metadata": {"name": "nope"}}, token=editor_token)
    assert status == 403
    for path in (f"/api/v1/namespaces/{namespace}/pods", "/api/v1/namespaces/default/pods",
                 "/api/v1/pods", "/api/v1/namespaces", "/api/v1/nodes"):
        status, _ = cluster.request("GET", path, token=editor_token)
        assert status == 403, path


def test_service_account_token_authenticates(cluster, namespace):
    token = cluster.service_account_token(namespace, "default")
    path = f"/api/v1/namespaces/{namespace}/pods"
    status, body = cluster.request("GET", path, token=token)
    assert status == 403
    assert f"system:serviceaccount:{namespace}:default" in body["message"]

    status, _ = cluster.request(
        "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings", {
            "metadata": {"name": "default-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"kind": "ServiceAccount", "name": "default",
                          "namespace": namespace}]})
    assert status == 201
    cluster.wait_for(lambda: cluster.request("GET", path, token=token)[0] == 200,
                     timeout=10, what="the service account to gain `view`")


def test_admin_kubeconfig(cluster):
    with open(cluster.kubeconfig) as f:
        config = yaml.safe_load(f)
    assert config["clusters"][0]["cluster"]["server"] == cluster.url
    assert config["users"][0]["user"]["token"] == cluster.admin_token
    assert oct(os.stat(cluster.kubeconfig).st_mode & 0o777) == "0o600"


def test_nodes_are_ready(cluster):
    assert len(cluster.nodes) == 2
    status, body = cluster.request("GET", "/api/v1/nodes")
    assert status == 200
    ready = {n["metadata"]["name"] for n in body["items"]
             if any(c["type"] == "Ready" and c["status"] == "True"
                    for c in n["status"]["conditions"])}
    assert set(cluster.nodes) <= ready


def test_deployment_pods_become_running(cluster, namespace):
    status, _ = cluster.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", {
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})
    assert status == 201

    def two_running():
        running = _running_pods(cluster, namespace, "app=web")
        return running if len(running) == 2 else None

    pods = cluster.wait_for(two_running, timeout=60, what="2 Running pods of deployment web")
    for pod in pods:
        assert pod["spec"]["nodeName"] in cluster.nodes
        assert pod["status"].get("podIP")


def test_seeded_objects_exist(seeded_cluster):
    cluster = seeded_cluster
    paths = workloads.seed(cluster)  # idempotent: returns every seeded object's path
    assert len(paths) > 40
    missing = [p for p in paths if cluster.request("GET", p)[0] != 200]
    assert missing == []

    status, events = cluster.request("GET", f"/api/v1/namespaces/{workloads.SHOP}/events",
                                     params={"fieldSelector": "type=Warning"})
    kinds = {e["involvedObject"]["kind"] for e in events["items"]}
    assert {"Pod", "Deployment"} <= kinds

    for ns, name, replicas in workloads.DEPLOYMENTS:
        assert len(_running_pods(cluster, ns, f"app={name}")) >= replicas

    def claim_bound():
        status, pvc = cluster.request(
            "GET", f"/api/v1/namespaces/{workloads.DATA}/persistentvolumeclaims/reports")
        return status == 200 and pvc["status"].get("phase") == "Bound"

    cluster.wait_for(claim_bound, timeout=30, what="the seeded claim to bind")


def test_seeded_crashloop_restarts(seeded_cluster):
    cluster = seeded_cluster

    def restarted():
        status, pod = cluster.request("GET", f"/api/v1/namespaces/{workloads.SHOP}/pods/crasher")
        statuses = pod["status"].get("containerStatuses") or []
        return status == 200 and statuses and statuses[0]["restartCount"] >= 1

    cluster.wait_for(restarted, timeout=60, what="the crash-looping pod to restart")


def test_missing_binaries_fail_with_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("DASHBOARD_KUBE_CACHE", str(tmp_path))
    with pytest.raises(ClusterStartError, match="missing binaries"):
        LocalCluster.start(nodes=1)


def test_port_clash_is_retried_and_stop_ends_every_process(cluster, monkeypatch):
    # A second, independent cluster (the session one must not be disturbed) whose first
    # attempt gets an etcd port that is already taken.
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    picks = []

    def clashing_free_ports(count):
        ports = free_ports(count)
        if not picks:
            ports[0] = busy.getsockname()[1]
        picks.append(ports)
        return ports

    monkeypatch.setattr(controlplane, "free_ports", clashing_free_ports)
    try:
        other = LocalCluster.start(nodes=1)
    finally:
        busy.close()
    assert len(picks) == 2
    assert other.url != cluster.url
    procs = list(other._procs)
    other.stop()
    for proc in procs:  # exited and reaped
        assert proc.exit_code() is not None and not os.path.exists(f"/proc/{proc.pid}")
    assert not os.path.exists(other.state_dir)
    assert cluster.request("GET", "/readyz", raw=True)[0] == 200


def test_killed_owner_leaves_nothing_behind(cluster):
    # The owner of a cluster dies without running stop(): the kernel signals the components
    # (PDEATHSIG) and the next start sweeps the directories it left.
    script = ("import time; from tests.cluster.controlplane import LocalCluster; "
              "c = LocalCluster.start(nodes=1); "
              "print(c.state_dir, c._etcd_dir, *[p.pid for p in c._procs], flush=True); "
              "time.sleep(120)")
    owner = subprocess.Popen([sys.executable, "-c", script], cwd=controlplane.REPO_ROOT,
                             stdout=subprocess.PIPE, text=True)
    try:
        state_dir, etcd_dir, *pids = owner.stdout.readline().split()
    finally:
        owner.kill()
        owner.wait(10)
        owner.stdout.close()
    assert pids, "the owner did not start its cluster"
    cluster.wait_for(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in pids),
                     timeout=30, what="the orphaned components to exit")
    controlplane._sweep_stale_state()
    assert not os.path.exists(state_dir) and not os.path.exists(etcd_dir)
