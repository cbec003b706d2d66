"""Every list of this family across all namespaces, over the seeded demo workloads."""

import pytest

SEEDED = [
    ("deployment", "deployments", {("demo-shop", "frontend"), ("demo-shop", "backend"),
                                   ("demo-data", "reporting")}),
    ("replicaset", "replicaSets", {("demo-shop", "legacy-cache")}),
    ("replicationcontroller", "replicationControllers", {("demo-shop", "legacy-worker")}),
    ("daemonset", "daemonSets", {("demo-data", "log-agent")}),
    ("statefulset", "statefulSets", {("demo-data", "db")}),
    ("job", "jobs", {("demo-batch", "report-once"), ("demo-batch", "parallel-batch")}),
    ("cronjob", "items", {("demo-batch", "nightly-report"), ("demo-batch", "ticker")}),
    ("pod", "pods", {("demo-data", "db-0"), ("demo-data", "db-1")}),
    ("namespace", "namespaces", {(None, "demo-shop"), (None, "demo-data"),
                                 (None, "demo-batch")}),
    # The Warning events tests/cluster/workloads.py seeds (_warning_events).
    ("event", "events", {("demo-shop", "crasher.demo-backoff"),
                         ("demo-shop", "frontend.demo-failedcreate")}),
]


@pytest.mark.parametrize("kind,key,expected", SEEDED)
def test_all_namespaces_list(seeded_cluster, gateway, admin_token, kind, key, expected):
    reply = gateway.get("/api/v1/" + kind, token=admin_token,
                        params={"page": "0", "sortBy": "a,namespace,a,name"})
    assert reply.status == 200, reply
    body = reply.json()
    items = body[key]
    assert body["listMeta"]["totalItems"] == len(items) > 0 and body["errors"] == []
    found = {(i["objectMeta"].get("namespace"), i["objectMeta"]["name"]) for i in items}
    assert expected <= found
    assert {i["typeMeta"]["kind"] for i in items} == {kind}
    order = [(i["objectMeta"].get("namespace", ""), i["objectMeta"]["name"]) for i in items]
    assert order == sorted(order)
    if kind in ("pod", "event"):
        assert len({ns for ns, _ in found}) > 1  # really across namespaces


def test_node_list_all(seeded_cluster, gateway, admin_token):
    body = gateway.get("/api/v1/node", token=admin_token).json()
    assert {n["objectMeta"]["name"] for n in body["nodes"]} == set(seeded_cluster.nodes)
    # The seeded pods run on the simulated nodes: their requests are allocated there.
    assert sum(n["allocatedResources"]["allocatedPods"] for n in body["nodes"]) >= 8
