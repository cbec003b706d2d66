"""Runs the real metrics sidecar (`python -m metrics_sidecar`) for tests, and reads it."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

import urllib3
import yaml

from tests.cluster.procs import free_ports
from tests.resources.kube import create

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONF = os.path.join(ROOT, "conf", "kubernetes", "metrics-sidecar.yaml")


class Sidecar:
    """One sidecar process; ``start`` again after ``stop`` reuses its port and database."""

    def __init__(self, kubeconfig, resolution="1s", duration="8s", db_file=None, port=None):
        self.port = port or free_ports(1)[0]
        self.url = "http://127.0.0.1:%d" % self.port
        self.db_file = db_file
        self.argv = [sys.executable, "-m", "metrics_sidecar", "--kubeconfig", kubeconfig,
                     "--bind-address", "127.0.0.1", "--port", str(self.port),
                     "--metric-resolution", resolution, "--metric-duration", duration, "-v", "1"]
        if db_file:
            self.argv += ["--db-file", db_file]
        self.log_path = tempfile.NamedTemporaryFile(prefix="sidecar-", suffix=".log",
                                                    delete=False).name
        self.proc = None
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=30))

    def start(self, timeout=20):
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, cwd=ROOT, stdout=log,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("sidecar exited with %s:\n%s" % (self.proc.returncode,
                                                                  self.log()))
            try:
                if self.get("/healthz")[0] == 200:
                    return self
            except urllib3.exceptions.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("sidecar did not answer within %ss:\n%s" % (timeout, self.log()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-4000:]

    def get(self, path, **params):
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        r = self.http.request("GET", url)
        return r.status, json.loads(r.data) if r.data else None

    def post(self, path, body, raw=None):
        r = self.http.request("POST", self.url + path,
                              body=raw if raw is not None else json.dumps(body).encode(),
                              headers={"Content-Type": "application/json"})
        return r.status, json.loads(r.data) if r.data else None

    def stop(self):
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def sidecar_identity(cluster, namespace, name="metrics-sidecar", without=()):
    """A service account bound to conf/kubernetes/metrics-sidecar.yaml's ClusterRole (the
    least rights the manifests give the sidecar), less the verbs ``without``; returns its
    token and the role's name."""
    with open(CONF) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    rules = [dict(r, verbs=[v for v in r["verbs"] if v not in without]) for r in role["rules"]]
    role_name = "%s-%s" % (role["metadata"]["name"], namespace)
    if name != "metrics-sidecar":
        role_name += "-" + name
    create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % namespace,
           {"metadata": {"name": name}})
    create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
           {"metadata": {"name": role_name}, "rules": rules})
    create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": role_name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]})
    token = cluster.service_account_token(namespace, name)

    def can_list_pods():
        status, _ = cluster.request("GET", "/api/v1/pods", token=token, params={"limit": 1})
        return status == 200
    cluster.wait_for(can_list_pods, timeout=30, what="the sidecar's ClusterRoleBinding")
    return token, role_name


def series(item):
    """{x: y} of a Metric object."""
    return {p["x"]: p["y"] for p in item["dataPoints"]}


def by_uid(body):
    return {item["uids"][0]: item for item in body["items"]}


def wait_points(sidecar, path, count, timeout=30, **params):
    """Waits until every item of a sidecar route has at least ``count`` points; the body."""
    holder = {}

    def enough():
        status, body = sidecar.get(path, **params)
        holder["body"] = body
        return status == 200 and body["items"] and all(
            len(i["dataPoints"]) >= count for i in body["items"])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if enough():
            return holder["body"]
        time.sleep(0.2)
    raise AssertionError("fewer than %d points at %s within %ss: %r\n%s"
                         % (count, path, timeout, holder.get("body"), sidecar.log()))


def health(side, within=None):
    """The sidecar's /healthz body (a 200), answered within ``within`` seconds when given."""
    start = time.monotonic()
    status, body = side.get("/healthz")
    assert status == 200, body
    if within is not None:
        assert time.monotonic() - start < within, (status, body)
    return body


def wait_health(side, predicate, what, timeout=30, within=None):
    """The first /healthz body ``predicate`` accepts, polled until ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        body = health(side, within)
        if predicate(body):
            return body
        assert time.monotonic() < deadline, "%s within %ss: %r\n%s" % (what, timeout, body,
                                                                       side.log())
        time.sleep(0.2)
