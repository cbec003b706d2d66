"""PUT /api/v1/node/{name}/drain: cordon, then evictions honouring disruption budgets.

The node is one this test registers itself, with no kubelet: the shared simulated nodes keep
serving the other tests. Its pods are made Running and Ready by writing their status, so a
disruption budget counts them as healthy."""

import secrets

import pytest

from tests.gateway.helpers import assert_error
from tests.resources import kube
from tests.writes.helpers import absent, bad, forbidden, read, unauthorized

NS_PER_SECOND = 10 ** 9


@pytest.fixture
def node(cluster):
    name = "drain-" + secrets.token_hex(4)
    kube.create(cluster, "/api/v1/nodes", {"metadata": {"name": name}})
    yield name
    cluster.request("DELETE", "/api/v1/nodes/" + name)


def put_pod(cluster, ns, node, name, labels=None, annotations=None, owner=None, phase="Running"):
    meta = {"name": name, "labels": labels or {"app": name}}
    if annotations:
        meta["annotations"] = annotations
    if owner:
        meta["ownerReferences"] = [owner]
    pod = kube.create(cluster, "/api/v1/namespaces/%s/pods" % ns, {
        "metadata": meta, "spec": kube.pod_spec(nodeName=node)})
    ready = "True" if phase == "Running" else "False"
    pod["status"] = {"phase": phase, "conditions": [
        {"type": "Ready", "status": ready}, {"type": "PodScheduled", "status": "True"}]}
    status, body = cluster.request("PUT", "/api/v1/namespaces/%s/pods/%s/status" % (ns, name),
                                   pod)
    assert status == 200, body
    return body


def drain(gateway, token, node, body):
    return gateway.request("PUT", "/api/v1/node/%s/drain" % node, token=token, body=body)


def test_refusals_change_nothing(cluster, gateway, admin_token, node):
    path = "/api/v1/nodes/" + node
    forbidden(drain(gateway, cluster.norights_token, node, {}), "get", "nodes")
    unauthorized(drain(gateway, None, node, {}))
    unauthorized(drain(gateway, None, node, []))  # 401 before any complaint about the body
    bad(drain(gateway, admin_token, node, []), "JSON object")
    bad(drain(gateway, admin_token, node, {"timeout": "2m"}), "timeout")
    bad(drain(gateway, admin_token, node, {"force": "yes"}), "force")
    bad(gateway.request("PUT", "/api/v1/node/%s/drain" % node, token=admin_token), "JSON object")
    assert not read(cluster, path)["spec"].get("unschedulable")
    body = assert_error(drain(gateway, admin_token, "no-such-node", {}), 404, "NotFound")
    assert body["message"].startswith("error getting node: ")


def test_drain_evicts_honours_budgets_and_skips_mirror_pods(cluster, gateway, namespace,
                                                            admin_token, node):
    ns = namespace
    put_pod(cluster, ns, node, "free")
    put_pod(cluster, ns, node, "guarded", labels={"app": "guarded"})
    put_pod(cluster, ns, node, "done", phase="Succeeded")
    node_obj = read(cluster, "/api/v1/nodes/" + node)
    put_pod(cluster, ns, node, "static", annotations={"kubernetes.io/config.mirror": "x"},
            owner={"apiVersion": "v1", "kind": "Node", "name": node,
                   "uid": node_obj["metadata"]["uid"], "controller": True})
    pdb_version = cluster.served_version("policy", "poddisruptionbudgets", ("v1", "v1beta1"))
    pdb = "/apis/policy/%s/namespaces/%s/poddisruptionbudgets" % (pdb_version, ns)
    kube.create(cluster, pdb, {"metadata": {"name": "keep"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}}})
    kube.wait_object(cluster, pdb + "/keep", lambda b: (b.get("status") or {}).get(
        "currentHealthy") == 1, what="the budget counting the guarded pod")

    # Without force, pods no controller would recreate stop the drain before any eviction.
    body = assert_error(drain(gateway, admin_token, node, {"force": False}), 409, "Conflict",
                        ["not managed by a controller"])
    assert {p["name"] for p in body["details"]["pods"]} == {"free", "guarded"}
    assert read(cluster, "/api/v1/nodes/" + node)["spec"]["unschedulable"] is True
    assert not absent(cluster, "/api/v1/namespaces/%s/pods/free" % ns)

    # The budget keeps the guarded pod until the timeout; the others go.
    body = assert_error(drain(gateway, admin_token, node, {"timeout": 3 * NS_PER_SECOND}),
                        504, "Timeout", ["guarded", "disruption budget"])
    assert body["details"]["pods"] == [{"namespace": ns, "name": "guarded",
                                        "reason": body["details"]["pods"][0]["reason"]}]
    for gone in ("free", "done"):
        assert absent(cluster, "/api/v1/namespaces/%s/pods/%s" % (ns, gone)), gone
    for kept in ("guarded", "static"):
        assert not absent(cluster, "/api/v1/namespaces/%s/pods/%s" % (ns, kept)), kept

    # Without the budget the drain completes.
    assert cluster.request("DELETE", pdb + "/keep")[0] == 200
    reply = drain(gateway, admin_token, node, {"timeout": 20 * NS_PER_SECOND})
    assert reply.status == 202, reply
    assert reply.json() == {"evicted": ["%s/guarded" % ns], "skipped": [
        {"namespace": ns, "name": "static", "reason": "mirror pod"}]}
    assert absent(cluster, "/api/v1/namespaces/%s/pods/guarded" % ns)
    cluster.request("DELETE", "/api/v1/namespaces/%s/pods/static" % ns, {"gracePeriodSeconds": 0})
