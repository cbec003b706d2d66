"""The fuzzer's run (tests/hardening/test_fuzz.py), started ahead of its test and going on beside
the rest of the suite.

The run is CPU-bound in schemathesis (a minute and more of one core), while most of the suite
waits: on processes starting, on watches, on deadlines it provokes. So the run starts with this
package's first test (conftest.py ``fuzz_started``) and its test is the session's last: it
then waits only for what is left of the run. This package comes after the only ones that
restart the API server (``cache/`` and ``faults/``), which the fuzzer must never meet: it would
count their 503s as the gateway's server errors.

The run owns what it uses: a scratch namespace with a service account that is admin there and
viewer elsewhere (the fuzzer's writes land there only; fuzzhooks.py) and a quota of a few pods
(its scale writes must not fill the nodes that the other tests schedule on meanwhile), objects
named fuzz-target for its writes to find, a gateway of its own, and the names of seeded objects
its reads reach (``real_names``). ``stop`` removes them all.
"""

import json
import os
import subprocess
import sys
import time

from dashboard_api.kinds import table as kinds
from tests.cluster import workloads
from tests.resources import kube
from tests.support.gateway import Gateway

CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "negative_data_rejection", "unsupported_method")
SEED = int(os.environ.get("FUZZ_SEED", "20261123"))
# Examples per operation in the fuzzing phase; the examples and coverage phases add their own
# (the coverage phase alone sends about 9,200 requests, every operation's boundary values and
# unsupported methods, whatever this number). CI's 3 (it was 6) keeps every operation
# fuzzed with a fixed seed and saves the run about 540 cases, a quarter of its CPU (a fuzzing
# case costs schemathesis about 18 ms, a coverage case 2 ms); docs/security.md's longer runs set
# FUZZ_MAX_EXAMPLES. Alone on two cores the run takes 60-85 s. One worker:
# schemathesis' threads trip a CPython 3.11 compiler race ("AST constructor recursion depth
# mismatch") now and then, and two workers were no faster here. Issue 18: with reads reaching
# real objects, 185 s against 157 s before, back to back on a loaded machine (same requests).
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "3"))
# Seconds from the run's start to its end at most: beside the suite it shares the cores.
TIME_LIMIT = int(os.environ.get("FUZZ_TIME_LIMIT", "600"))
# Pods the scratch namespace may hold (a ResourceQuota): the fuzzer's writes reach the API
# server all the same, and the nodes keep room for the rest of the suite.
MAX_PODS = 4
HERE = os.path.dirname(os.path.abspath(__file__))
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def make_scratch(cluster):
    """(the scratch namespace, the fuzzer's token), with objects named fuzz-target in it."""
    ns = cluster.new_namespace("fuzz")
    # The run goes on beside other tests, which need the simulated nodes: its scale writes
    # asked for hundreds of replicas of fuzz-target, whose pods took every node's CPU.
    kube.create(cluster, "/api/v1/namespaces/%s/resourcequotas" % ns,
                {"metadata": {"name": "fuzz-pods"}, "spec": {"hard": {"pods": str(MAX_PODS)}}})
    kube.create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % ns,
                {"metadata": {"name": "fuzzer"}})
    subject = [{"kind": "ServiceAccount", "name": "fuzzer", "namespace": ns}]
    kube.create(cluster, RBAC + "/namespaces/%s/rolebindings" % ns, {
        "metadata": {"name": "fuzzer-admin"}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "admin"}})
    kube.create(cluster, RBAC + "/clusterrolebindings", {
        "metadata": {"name": _viewer(ns)}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "view"}})
    labels = {"app": "fuzz-target"}
    kube.apps(cluster, ns, "deployments", "fuzz-target", labels)
    kube.replication_controller(cluster, ns, "fuzz-target", {"app": "fuzz-rc"})
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns,
                {"metadata": {"name": "fuzz-target"}, "data": {"k": "v"}})
    return ns, cluster.service_account_token(ns, "fuzzer")


def _viewer(ns):
    return "fuzzer-view-" + ns


def first_name(cluster, path, namespace=None, where=None):
    """(namespace, name) of the first object listed at ``path`` (in ``namespace`` when given,
    preferring the seeded namespaces), or None."""
    status, body = cluster.request("GET", path, params={"limit": "100"})
    if status != 200:
        return None
    items = [i for i in body.get("items") or [] if where is None or where(i)]
    seeded = [i for i in items if i["metadata"].get("namespace") in workloads.NAMESPACES]
    for item in seeded + items:
        meta = item["metadata"]
        if namespace is None or meta.get("namespace") == namespace:
            return meta.get("namespace"), meta["name"]
    return None


def real_names(cluster):
    """For each route resource (the first segment after /api/v1/), path parameter values
    naming objects that exist in the seeded cluster: the fuzzer's reads then reach past 404."""
    names = {}
    for kind in kinds.TABLE:
        version = cluster.served_version(kind.group or "", kind.plural, kind.versions) \
            if kind.group else "v1"
        prefix = "/apis/%s/%s" % (kind.group, version) if kind.group else "/api/v1"
        found = first_name(cluster, "%s/%s" % (prefix, kind.plural))
        if found:
            ns, name = found
            names[kind.name] = dict({"name": name}, **({"namespace": ns} if ns else {}))
    status, pods = cluster.request("GET", "/api/v1/namespaces/%s/pods" % workloads.SHOP)
    running = [p for p in pods["items"] if p["status"].get("phase") == "Running"]
    if running:
        pod = running[0]
        real = {"namespace": workloads.SHOP, "pod": pod["metadata"]["name"],
                "name": pod["metadata"]["name"],
                "container": pod["spec"]["containers"][0]["name"],
                "resourceName": "frontend", "resourceType": "deployment"}
        for resource in ("pod", "log", "exec"):
            names[resource] = dict(names.get(resource, {}), **real)
    crd = "widgets." + workloads.CRD_GROUP
    names["crd"] = {"crd": crd, "namespace": workloads.SHOP, "name": "small-red"}
    names["_raw"] = {"kind": "deployment", "namespace": workloads.SHOP, "name": "frontend"}
    names["scale"] = dict(names["_raw"])
    names["{kind}"] = dict(names["_raw"])
    # Not the integration "sidecar": this gateway has none running, so its health is the
    # specification's 503 (tests/metrics covers it), which the fuzzer counts as a server error.
    return names


class FuzzRun:
    """schemathesis against a gateway of its own, in a process started now (see the module
    docstring); ``finish`` waits for it and says what it did."""

    def __init__(self, cluster, workdir):
        self.cluster = cluster
        self.ns, writer = make_scratch(cluster)
        self.gw = None
        self.proc = None
        try:
            self.gw = Gateway.start(cluster, "--enable-openapi")
            self.statuses = workdir / "statuses.txt"
            self.output = workdir / "schemathesis.out"   # a file: nobody reads a pipe meanwhile
            env = dict(os.environ, FUZZ_GATEWAY=self.gw.url, FUZZ_READ_TOKEN=cluster.admin_token,
                       FUZZ_WRITE_TOKEN=writer, FUZZ_SCRATCH=self.ns,
                       SCHEMATHESIS_HOOKS="fuzzhooks", PYTHONPATH=HERE, NO_COLOR="1",
                       FUZZ_STATUS_FILE=str(self.statuses),
                       FUZZ_REAL_NAMES=json.dumps(real_names(cluster)))
            argv = [os.path.join(os.path.dirname(sys.executable), "schemathesis"), "run",
                    self.gw.url + "/apidocs.json", "--checks", ",".join(CHECKS),
                    "--seed", str(SEED), "--max-examples", str(MAX_EXAMPLES),
                    "--workers", "1", "--phases", "examples,coverage,fuzzing",
                    "--request-timeout", "30", "--no-color"]
            self.started, self.started_at = time.monotonic(), time.time()
            with open(self.output, "wb") as out:
                # Run elsewhere than the work tree: schemathesis keeps a cache in its working
                # dir.
                self.proc = subprocess.Popen(argv, env=env, cwd=str(workdir), stdout=out,
                                             stderr=subprocess.STDOUT)
        except BaseException:
            self.stop()
            raise

    def finish(self):
        """(schemathesis' exit code, its output, the seconds it ran, the gateway's log): waits
        for the run until TIME_LIMIT from its start; AssertionError if it is not over then."""
        try:
            self.proc.wait(timeout=max(0.0, self.started + TIME_LIMIT - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError("the fuzzer did not end within %d s" % TIME_LIMIT)
        with open(self.gw.log_path, errors="replace") as f:
            log = f.read()
        output = self.output.read_text(errors="replace")
        # Its length: to its output's last line, however long ago the run ended.
        ran = os.path.getmtime(self.output) - self.started_at
        return self.proc.returncode, output, ran, log

    def stop(self):
        """Ends the run and its gateway, and removes what it made."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.gw is not None:
            self.gw.stop()
        self.cluster.request("DELETE", RBAC + "/clusterrolebindings/" + _viewer(self.ns))
        self.cluster.request("DELETE", "/api/v1/namespaces/" + self.ns)
