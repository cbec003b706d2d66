"""conf/kubernetes as a kustomize base: accepted by the local API server (1.20) in a server-side
dry run, and its service identity suffices for a gateway serving lists and a terminal."""

import os
import re
import subprocess

import yaml

from tests.cluster import users
from tests.cluster.controlplane import kube_bin_dir
from tests.support.gateway import ROOT, Gateway
from tests.terminal.jsclient import new_session, sockjs_url

BASE = os.path.join(ROOT, "conf", "kubernetes")
NAMESPACE = "kubernetes-dashboard"
IDENTITY_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def kubectl(cluster, *args, stdin=None):
    binary = str(kube_bin_dir() / "bin" / "kubectl")
    assert os.access(binary, os.X_OK), "kubectl 1.20 is needed (bin/bootstrap unpacks it)"
    done = subprocess.run([binary, "--kubeconfig", cluster.kubeconfig] + list(args),
                          input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def rendered(cluster):
    return [d for d in yaml.safe_load_all(kubectl(cluster, "kustomize", BASE)) if d]


def own_namespace(cluster):
    # Objects in a namespace created in the same dry run would not find it: it must exist.
    status, _ = cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    assert status in (201, 409)


def test_the_base_passes_a_server_side_dry_run(cluster):
    own_namespace(cluster)
    out = kubectl(cluster, "apply", "--dry-run=server", "-k", BASE)
    docs = rendered(cluster)
    kinds = sorted({d["kind"] for d in docs})
    assert kinds == ["ClusterRole", "ClusterRoleBinding", "Deployment", "Namespace",
                     "NetworkPolicy", "PodDisruptionBudget", "Role", "RoleBinding", "Service",
                     "ServiceAccount"]
    assert out.count("(server dry run)") == len(docs)
    gateway = next(d for d in docs if d["kind"] == "Deployment"
                   and d["metadata"]["name"] == "dashboard-api")
    pod = gateway["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert gateway["spec"]["replicas"] == 2
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"] == {"allowPrivilegeEscalation": False,
                                            "readOnlyRootFilesystem": True,
                                            "capabilities": {"drop": ["ALL"]}}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert set(container["resources"]) == {"requests", "limits"}
    assert pod["topologySpreadConstraints"][0]["topologyKey"] == "kubernetes.io/hostname"
    assert "--csrf-key-file=/etc/dashboard-api/csrf/key" in container["args"]
    # Nothing on secrets for the gateway's identity (its own operations need none).
    for doc in docs:
        if doc["kind"] in ("ClusterRole", "Role") and doc["metadata"]["name"].startswith(
                "dashboard-api"):
            assert not any("secrets" in r.get("resources", ()) or "*" in r.get("resources", ())
                           for r in doc["rules"])


def test_the_manifests_identity_serves_lists_and_a_terminal(cluster, admin_token, web_pod,
                                                            js, tmp_path):
    identity = [d for d in rendered(cluster) if d["kind"] in IDENTITY_KINDS
                and "dashboard-api" in d["metadata"]["name"]]
    own_namespace(cluster)
    manifest = yaml.safe_dump_all(identity)
    kubectl(cluster, "apply", "-f", "-", stdin=manifest)
    try:
        token = cluster.service_account_token(NAMESPACE, "dashboard-api")
        kubeconfig = str(tmp_path / "identity.kubeconfig")
        users.write_kubeconfig(kubeconfig, cluster.url, cluster.ca_file, "dashboard-api", token)
        gw = Gateway.start(cluster, "--kubeconfig", kubeconfig, kubeconfig=False)
        try:
            gw.wait_cache_synced(timeout=60)
            text = gw.get("/metrics").data.decode()
            assert re.search(r'^dashboard_cache_state\{kind="pod",state="synced"\} 1', text,
                             re.M), text
            pods = gw.get("/api/v1/pod/" + web_pod, token=admin_token)
            assert pods.status == 200, pods
            assert [p["objectMeta"]["name"] for p in pods.json()["pods"]] == ["web"]
            session_id = new_session(gw, admin_token, web_pod, "web")
            js.open("t", sockjs_url(gw, session_id), bind=session_id)
            js.stdin("t", "echo identity-$((9*9))\r")
            js.wait_output("t", "identity-81")
        finally:
            gw.stop()
    finally:
        kubectl(cluster, "delete", "-f", "-", "--wait=false", stdin=manifest)
