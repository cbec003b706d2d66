"""conf/kubernetes, the kustomize base, targets current Kubernetes releases: it validates
offline, strictly, against the API schemas of current releases (kubernetes-validate ships
them), its namespace enforces the Pod Security `restricted` profile that its pods meet, and no
object is at a version of 1.20 only. The overlay conf/overlays/k8s-1.20 is the base for the
local API server (1.20): accepted there in a server-side dry run, and its service identity
suffices for a gateway serving lists and a terminal. The overlay conf/overlays/many-clusters
(remote clusters from a Secret) validates too and its flags serve what it says."""

import base64
import copy
import os
import re
import subprocess
import time

import yaml

from tests.cluster import users
from tests.cluster.controlplane import kube_bin_dir
from tests.support.gateway import ROOT, Gateway
from tests.terminal.jsclient import new_session, sockjs_url
from tests.unit.kinds.test_versions import ONLY_1_20, readme_rows

BASE = os.path.join(ROOT, "conf", "kubernetes")
OVERLAY_1_20 = os.path.join(ROOT, "conf", "overlays", "k8s-1.20")
MANY_CLUSTERS = os.path.join(ROOT, "conf", "overlays", "many-clusters")
NAMESPACE = "kubernetes-dashboard"
IDENTITY_KINDS = ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
KINDS = ["ClusterRole", "ClusterRoleBinding", "Deployment", "Namespace", "NetworkPolicy",
         "PodDisruptionBudget", "Role", "RoleBinding", "Service", "ServiceAccount"]
# Current releases checked besides the newest schema set kubernetes-validate ships.
CURRENT = ("1.34.0", "1.35.0")


def kubectl(*args, cluster=None, stdin=None):
    binary = str(kube_bin_dir() / "bin" / "kubectl")
    assert os.access(binary, os.X_OK), "kubectl 1.20 is needed (bin/bootstrap unpacks it)"
    argv = [binary] + (["--kubeconfig", cluster.kubeconfig] if cluster else []) + list(args)
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def rendered(directory):
    """The documents of a kustomization, rendered by kubectl's own kustomize (no cluster)."""
    return [d for d in yaml.safe_load_all(kubectl("kustomize", directory)) if d]


def own_namespace(cluster):
    # Objects in a namespace created in the same dry run would not find it: it must exist.
    status, _ = cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
    assert status in (201, 409)


def schema_problem(doc, version):
    """None when ``doc`` validates strictly against ``version``'s schemas, else why not (an
    object whose group/version the release does not serve has no schema: a problem too)."""
    from kubernetes_validate import utils
    try:
        utils.validate(doc, version, strict=True)
    except utils.SchemaNotFoundError:
        return "%s is not served by Kubernetes %s" % (doc["apiVersion"], version)
    except utils.ValidationError as exc:
        return exc.message
    return None


def test_the_base_validates_against_current_releases():
    from kubernetes_validate import utils
    docs = rendered(BASE)
    assert sorted({d["kind"] for d in docs}) == KINDS
    assert [d["apiVersion"] for d in docs if d["kind"] == "PodDisruptionBudget"] == ["policy/v1"]
    assert not {d["apiVersion"] for d in docs} & set(ONLY_1_20)
    newest = utils.latest_version()
    release = lambda v: tuple(int(p) for p in v.split(".")[:2])  # noqa: E731
    versions = sorted(set(CURRENT + (newest,)), key=release)
    assert release(versions[-1]) >= (1, 35), versions   # the package knows current releases
    for version in versions:
        problems = {(d["kind"], d["metadata"]["name"]): schema_problem(d, version)
                    for d in docs}
        assert not any(problems.values()), (version, problems)
    # The check fails where it should: the 1.20 overlay's budget, a misspelt field, a wrong type.
    pdb = next(d for d in rendered(OVERLAY_1_20) if d["kind"] == "PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1beta1"
    assert "not served" in schema_problem(pdb, newest)
    gateway = copy.deepcopy(next(d for d in docs if d["kind"] == "Deployment"))
    gateway["spec"]["replica"] = 2
    assert "replica" in schema_problem(gateway, newest)
    gateway = copy.deepcopy(next(d for d in docs if d["kind"] == "Deployment"))
    gateway["spec"]["replicas"] = "two"
    assert "two" in schema_problem(gateway, newest)


def restricted_violations(pod):
    """What the Pod Security Standards' `restricted` profile refuses in a pod spec (its checks
    that a pod template can fail)."""
    out = []
    pod_sc = pod.get("securityContext") or {}
    if pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
        out.append("host namespaces")
    for volume in pod.get("volumes") or ():
        kinds = set(volume) - {"name"}
        if not kinds <= {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                         "persistentVolumeClaim", "projected", "secret"}:
            out.append("volume %s: %s" % (volume["name"], sorted(kinds)))
    for c in (pod.get("initContainers") or []) + pod["containers"]:
        sc = c.get("securityContext") or {}
        if sc.get("privileged"):
            out.append(c["name"] + ": privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(c["name"] + ": allowPrivilegeEscalation is not false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or ()):
            out.append(c["name"] + ": capabilities do not drop ALL")
        if set(caps.get("add") or ()) - {"NET_BIND_SERVICE"}:
            out.append(c["name"] + ": adds capabilities")
        if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is not True:
            out.append(c["name"] + ": runAsNonRoot is not true")
        if sc.get("runAsUser", pod_sc.get("runAsUser")) == 0:
            out.append(c["name"] + ": runs as user 0")
        seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(c["name"] + ": seccomp profile %s" % seccomp)
        if any(p.get("hostPort") for p in c.get("ports") or ()):
            out.append(c["name"] + ": host port")
    return out


def test_the_namespace_enforces_restricted_which_the_pods_meet():
    docs = rendered(BASE)
    [namespace] = [d for d in docs if d["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    for mode in ("enforce", "audit", "warn"):
        assert labels["pod-security.kubernetes.io/" + mode] == "restricted"
    templates = {d["metadata"]["name"]: d["spec"]["template"]["spec"] for d in docs
                 if d["kind"] == "Deployment"}
    assert sorted(templates) == ["dashboard-api", "dashboard-metrics-sidecar"]
    for name, pod in templates.items():
        assert restricted_violations(pod) == [], name
    # The check itself refuses what the profile refuses.
    loose = copy.deepcopy(templates["dashboard-api"])
    loose["securityContext"].pop("runAsNonRoot")
    loose["containers"][0]["securityContext"]["capabilities"] = {"add": ["NET_ADMIN"]}
    loose["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
    assert len(restricted_violations(loose)) == 4


def test_the_many_clusters_overlay_serves_its_own_cluster_and_the_secrets(tmp_path,
                                                                         monkeypatch):
    """conf/overlays/many-clusters: the base plus the Secret of remote kubeconfigs mounted and
    named by --cluster flags; it validates, its pod stays restricted, and its flags, read as
    the gateway reads them in a pod, serve in-cluster at the root and each remote context."""
    from kubernetes_validate import utils

    from dashboard_api.app import options
    from dashboard_api.clusters import sources
    base = rendered(BASE)
    docs = rendered(MANY_CLUSTERS)
    assert sorted(d["kind"] for d in docs) == sorted(d["kind"] for d in base)
    for doc in docs:
        assert schema_problem(doc, utils.latest_version()) is None, doc["metadata"]["name"]
    pod = next(d for d in docs if d["metadata"]["name"] == "dashboard-api"
               and d["kind"] == "Deployment")["spec"]["template"]["spec"]
    assert restricted_violations(pod) == []
    [volume] = [v for v in pod["volumes"] if v["name"] == "clusters"]
    assert volume["secret"]["secretName"] == "dashboard-api-clusters"
    [container] = pod["containers"]
    [mount] = [m for m in container["volumeMounts"] if m["name"] == "clusters"]
    assert mount["readOnly"] is True
    # The flags as the gateway reads them, the Secret's file replaced by one of two contexts.
    remote = tmp_path / "kubeconfig"
    users.write_contexts(str(remote), {
        name: ("https://%s.example:6443" % name, "/ca.crt", "dashboard-api", "t-" + name)
        for name in ("staging", "production")}, "staging")
    argv = [a.replace(mount["mountPath"] + "/kubeconfig", str(remote))
            for a in container["args"]]
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    entries, default = sources.read(options.parse(argv))
    assert [e.name for e in entries] == ["in-cluster", "staging", "production"]
    assert default == "in-cluster"


def test_the_1_20_overlay_passes_a_server_side_dry_run(cluster):
    own_namespace(cluster)
    out = kubectl("apply", "--dry-run=server", "-k", OVERLAY_1_20, cluster=cluster)
    docs = rendered(OVERLAY_1_20)
    assert sorted({d["kind"] for d in docs}) == KINDS
    assert out.count("(server dry run)") == len(docs)
    # The overlay is the base but for the budget's version.
    base = rendered(BASE)
    for doc in base:
        if doc["kind"] == "PodDisruptionBudget":
            doc["apiVersion"] = "policy/v1beta1"
    key = lambda d: (d["kind"], d["metadata"]["name"])  # noqa: E731
    assert sorted(docs, key=key) == sorted(base, key=key)
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


def test_the_readme_versions_of_1_20_are_the_local_clusters(cluster):
    """The 1.20 column of docs/kinds.md's table of versions is what the local 1.20 API server serves each kind at; where
    the current column differs, 1.20 does not serve that one."""
    def serves(api_version, kind):
        path = "/apis/" + api_version if "/" in api_version else "/api/" + api_version
        status, body = cluster.request("GET", path)
        return status == 200 and any(r["kind"] == kind and "/" not in r["name"]
                                     for r in body.get("resources", ()))

    rows = readme_rows()
    assert len(rows) >= 37
    for name, (kind, old, current) in rows.items():
        assert serves(old, kind), (name, old)
        if old != current:
            assert not serves(current, kind), (name, current)


def test_the_manifests_identity_serves_lists_and_a_terminal(cluster, admin_token, web_pod,
                                                            js, tmp_path):
    identity = [d for d in rendered(OVERLAY_1_20) if d["kind"] in IDENTITY_KINDS
                and "dashboard-api" in d["metadata"]["name"]]
    own_namespace(cluster)
    manifest = yaml.safe_dump_all(identity)
    kubectl("apply", "-f", "-", cluster=cluster, stdin=manifest)
    try:
        token = cluster.service_account_token(NAMESPACE, "dashboard-api")
        kubeconfig = str(tmp_path / "identity.kubeconfig")
        users.write_kubeconfig(kubeconfig, cluster.url, cluster.ca_file, "dashboard-api", token)
        gw = Gateway.start(cluster, "--kubeconfig", kubeconfig, kubeconfig=False)
        try:
            gw.wait_cache_synced(timeout=60)
            text = gw.get("/metrics").data.decode()
            assert re.search(r'^dashboard_cache_state\{cluster="[^"]+",kind="pod",state="synced"\} 1', text,
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
        kubectl("delete", "-f", "-", "--wait=false", cluster=cluster, stdin=manifest)


SIGN_IN_SECRET = """
apiVersion: v1
kind: Secret
metadata:
  name: dashboard-user-token
  annotations: {kubernetes.io/service-account.name: dashboard-user}
type: kubernetes.io/service-account-token
"""


def test_the_readmes_long_lived_token_signs_in(cluster, gateway):  # noqa: F811
    """The README's sign-in steps that 1.20 has (kubectl create token came in 1.24): a service
    account bound to `view`, a token Secret of our own, its token; then the gateway."""
    own_namespace(cluster)
    ns = ["-n", NAMESPACE]
    kubectl(*ns, "create", "serviceaccount", "dashboard-user", cluster=cluster)
    try:
        kubectl("create", "clusterrolebinding", "dashboard-user", "--clusterrole=view",
                "--serviceaccount=%s:dashboard-user" % NAMESPACE, cluster=cluster)
        kubectl(*ns, "apply", "-f", "-", cluster=cluster, stdin=SIGN_IN_SECRET)
        deadline = time.monotonic() + 30
        while True:   # the token controller fills the Secret
            encoded = kubectl(*ns, "get", "secret", "dashboard-user-token", "-o",
                              "jsonpath={.data.token}", cluster=cluster)
            if encoded or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        token = base64.b64decode(encoded).decode()
        assert token.count(".") == 2   # a JWT
        listed = gateway.get("/api/v1/pod/" + NAMESPACE, token=token)
        assert listed.status == 200, listed
        me = gateway.get("/api/v1/me", token=token)
        assert me.status == 200, me
        # view, nothing more: a write is the API server's 403.
        refused = gateway.request("DELETE", "/api/v1/_raw/serviceaccount/namespace/%s/name/"
                                  "dashboard-user" % NAMESPACE, token=token)
        assert refused.status == 403, refused
    finally:
        kubectl("delete", "clusterrolebinding", "dashboard-user", "--ignore-not-found",
                cluster=cluster)
        kubectl(*ns, "delete", "serviceaccount", "dashboard-user", "--ignore-not-found",
                "--wait=false", cluster=cluster)
        kubectl(*ns, "delete", "secret", "dashboard-user-token", "--ignore-not-found",
                "--wait=false", cluster=cluster)
