"""The property-based fuzzer (schemathesis) against a gateway on the local cluster, driven by the
gateway's own /apidocs.json: every operation, a bounded number of examples each, a fixed seed.

Reads go out with the admin token; writes with a service account that is admin in a scratch
namespace only (and may view the rest), with {namespace} set to that scratch namespace, so the
fuzzer cannot break the cluster other tests use (tests/hardening/fuzzhooks.py).

Checks: not_a_server_error, status_code_conformance, content_type_conformance,
response_schema_conformance, negative_data_rejection and unsupported_method. Nothing is
excluded. A longer run with a random seed: see the README ("The API fuzzer").
"""

import os
import re
import subprocess
import sys
import time

import pytest

from tests.resources import kube
from tests.support.gateway import Gateway

CHECKS = ("not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "negative_data_rejection", "unsupported_method")
SEED = int(os.environ.get("FUZZ_SEED", "20261123"))
# Examples per operation in the fuzzing phase; the examples and coverage phases add their own
# (the coverage phase alone sends several thousand requests). Measured: about 80 s on two
# quiet cores, 120 s on loaded ones; CI's budget for this test is three minutes. One worker:
# schemathesis' threads trip a CPython 3.11 compiler race ("AST constructor recursion depth
# mismatch") now and then, and two workers were no faster here.
MAX_EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "6"))
TIME_LIMIT = int(os.environ.get("FUZZ_TIME_LIMIT", "400"))
HERE = os.path.dirname(os.path.abspath(__file__))
RBAC = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture(scope="module")
def scratch(cluster):
    """A scratch namespace, a service account that is admin there and viewer elsewhere, and
    objects named fuzz-target for the writes to find; all removed afterwards."""
    ns = cluster.new_namespace("fuzz")
    kube.create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % ns,
                {"metadata": {"name": "fuzzer"}})
    subject = [{"kind": "ServiceAccount", "name": "fuzzer", "namespace": ns}]
    kube.create(cluster, RBAC + "/namespaces/%s/rolebindings" % ns, {
        "metadata": {"name": "fuzzer-admin"}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "admin"}})
    viewer = "fuzzer-view-" + ns
    kube.create(cluster, RBAC + "/clusterrolebindings", {
        "metadata": {"name": viewer}, "subjects": subject,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "view"}})
    labels = {"app": "fuzz-target"}
    kube.apps(cluster, ns, "deployments", "fuzz-target", labels)
    kube.replication_controller(cluster, ns, "fuzz-target", {"app": "fuzz-rc"})
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns,
                {"metadata": {"name": "fuzz-target"}, "data": {"k": "v"}})
    token = cluster.service_account_token(ns, "fuzzer")
    yield ns, token
    cluster.request("DELETE", RBAC + "/clusterrolebindings/" + viewer)
    cluster.request("DELETE", "/api/v1/namespaces/" + ns)


def test_the_fuzzer_finds_nothing(cluster, seeded_cluster, scratch, capsys, tmp_path):
    ns, writer = scratch
    gw = Gateway.start(cluster, "--enable-openapi")
    try:
        env = dict(os.environ, FUZZ_GATEWAY=gw.url, FUZZ_READ_TOKEN=cluster.admin_token,
                   FUZZ_WRITE_TOKEN=writer, FUZZ_SCRATCH=ns, SCHEMATHESIS_HOOKS="fuzzhooks",
                   PYTHONPATH=HERE, NO_COLOR="1")
        argv = [os.path.join(os.path.dirname(sys.executable), "schemathesis"), "run",
                gw.url + "/apidocs.json", "--checks", ",".join(CHECKS),
                "--seed", str(SEED), "--max-examples", str(MAX_EXAMPLES), "--workers", "1",
                "--phases", "examples,coverage,fuzzing", "--request-timeout", "30",
                "--no-color"]
        started = time.monotonic()
        # Run elsewhere than the work tree: schemathesis keeps a cache in its working dir.
        run = subprocess.run(argv, env=env, cwd=str(tmp_path), capture_output=True,
                             text=True, timeout=TIME_LIMIT)
        elapsed = time.monotonic() - started
        with open(gw.log_path, errors="replace") as f:
            log = f.read()
        requests = log.count(" Incoming HTTP/")
        writes_done = len(re.findall(r'Audit: user="system:serviceaccount:%s:fuzzer" '
                                     r'verb=(?:PUT|POST|DELETE) .* status=2\d\d' % ns, log))
    finally:
        gw.stop()
    output = run.stdout + run.stderr
    cases = re.search(r"(\d+) generated", output)
    with capsys.disabled():
        print("\nfuzzer: seed %d, %s test cases, %d requests reached the gateway (%d writes "
              "succeeded), %.0f s" % (SEED, cases.group(1) if cases else "?", requests,
                                      writes_done, elapsed))
    assert run.returncode == 0, output[-12000:]
    # Not vacuous: every operation tested, thousands of requests, and writes that succeeded
    # (with the scratch token, in the scratch namespace).
    selected = re.search(r"Selected: (\d+)/(\d+)", output)
    tested = re.search(r"Tested: (\d+)", output)
    assert selected and tested and int(tested.group(1)) == int(selected.group(2)) >= 160, output
    assert requests > 2000, output[-3000:]
    assert writes_done > 0, "no generated write succeeded"
