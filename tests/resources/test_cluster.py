"""Namespace, Node and Event routes."""

import secrets

from tests.resources import kube
from tests.resources.checks import get, usable_only


def test_namespace_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.create(cluster, "/api/v1/namespaces/%s/resourcequotas" % ns, {
        "metadata": {"name": "quota"},
        "spec": {"hard": {"pods": "10", "requests.cpu": "2"}}})
    kube.create(cluster, "/api/v1/namespaces/%s/limitranges" % ns, {
        "metadata": {"name": "limits"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"},
                             "default": {"cpu": "500m", "memory": "256Mi"}}]}})
    kube.wait_object(cluster, "/api/v1/namespaces/%s/resourcequotas/quota" % ns,
                     lambda q: q.get("status", {}).get("hard"), what="the quota status")
    kube.event(cluster, ns, "ns-event", {"kind": "Pod", "name": "whatever", "namespace": ns},
               "Hello", "hi")

    body = get(gateway, "/api/v1/namespace", admin_token, filterBy="name," + ns)
    assert body["listMeta"] == {"totalItems": 1} and body["errors"] == []
    [item] = body["namespaces"]
    assert item["typeMeta"] == {"kind": "namespace"} and item["phase"] == "Active"
    assert "namespace" not in item["objectMeta"]
    assert "status" not in body and "cumulativeMetrics" not in body

    d = get(gateway, "/api/v1/namespace/" + ns, admin_token)
    assert d["phase"] == "Active" and d["errors"] == []
    [quota] = d["resourceQuotaList"]["items"]
    assert d["resourceQuotaList"]["listMeta"] == {"totalItems": 1}
    assert quota["typeMeta"] == {"kind": "resourcequota"}
    assert quota["statusList"] == {"pods": {"used": "0", "hard": "10"},
                                   "requests.cpu": {"used": "0", "hard": "2"}}
    assert sorted(d["resourceLimits"], key=lambda i: i["resourceName"]) == [
        {"resourceName": "cpu", "resourceType": "Container", "max": "1", "default": "500m",
         "defaultRequest": "500m"},
        {"resourceName": "memory", "resourceType": "Container", "default": "256Mi",
         "defaultRequest": "256Mi"}]

    events = get(gateway, "/api/v1/namespace/%s/event" % ns, admin_token)
    assert [e["objectMeta"]["name"] for e in events["events"]] == ["ns-event"]


def test_namespace_rights_and_missing(gateway, admin_token, editor_token, norights_token):
    reply = gateway.get("/api/v1/namespace", token=norights_token)
    assert reply.status == 403 and "cannot list resource \"namespaces\"" in \
        reply.json()["message"]
    # The editor may not list namespaces, but sees the one they can use.
    body = get(gateway, "/api/v1/namespace", editor_token)
    assert [n["objectMeta"]["name"] for n in body["namespaces"]] == ["team-a"], body
    assert body["listMeta"]["totalItems"] == 1
    assert gateway.get("/api/v1/namespace/team-a", token=norights_token).status == 403
    assert gateway.get("/api/v1/namespace/no-such-ns", token=admin_token).status == 404
    assert gateway.get("/api/v1/namespace/no-such-ns/event", token=admin_token).status == 404
    assert gateway.get("/api/v1/namespace", token=admin_token,
                       params={"page": "one"}).status == 400


def test_node_routes(cluster, gateway, namespace, admin_token):
    node = cluster.nodes[0]
    kube.pod(cluster, namespace, "on-node", nodeName=node)
    kube.wait_pods(cluster, namespace, "app=on-node", 1)
    node_obj = cluster.request("GET", "/api/v1/nodes/" + node)[1]
    event_name = "node-ev-" + secrets.token_hex(3)
    kube.event(cluster, "default", event_name,
               {"kind": "Node", "name": node, "uid": node, "namespace": ""}, "Rebooted",
               "node rebooted", type_="Warning")

    body = get(gateway, "/api/v1/node", admin_token, sortBy="a,name")
    assert kube.names(body, "nodes") == sorted(cluster.nodes)
    assert body["cumulativeMetrics"] == [] and "status" not in body
    item = body["nodes"][0]
    assert item["typeMeta"] == {"kind": "node"} and item["ready"] == "True"
    assert item["nodeInfo"]["kubeletVersion"] == node_obj["status"]["nodeInfo"]["kubeletVersion"]
    res = item["allocatedResources"]
    assert (res["cpuCapacity"], res["memoryCapacity"], res["podCapacity"]) == (
        4000, 8 * 2 ** 30, 110)
    assert res["allocatedPods"] >= 1 and res["cpuRequests"] >= 50
    assert res["cpuRequestsFraction"] == res["cpuRequests"] / 4000 * 100
    assert res["memoryLimitsFraction"] == res["memoryLimits"] / (8 * 2 ** 30) * 100
    assert res["podFraction"] == res["allocatedPods"] / 110 * 100

    d = get(gateway, "/api/v1/node/" + node, admin_token, filterBy="namespace," + namespace)
    assert d["unschedulable"] is False and d["errors"] == [] and d["metrics"] == []
    assert d["podCIDR"] == node_obj["spec"].get("podCIDR", "")
    assert {c["type"] for c in d["conditions"]} >= {"Ready"}
    assert d["addresses"] == node_obj["status"]["addresses"]
    assert d["allocatedResources"]["allocatedPods"] >= 1
    assert kube.names(d["podList"], "pods") == ["on-node"]
    assert d["podList"]["listMeta"] == {"totalItems": 1}
    assert event_name in [e["objectMeta"]["name"] for e in d["eventList"]["events"]]

    pods = get(gateway, "/api/v1/node/%s/pod" % node, admin_token,
                  filterBy="namespace," + namespace)
    assert kube.names(pods, "pods") == ["on-node"]
    assert pods["pods"][0]["nodeName"] == node
    events = get(gateway, "/api/v1/node/%s/event" % node, admin_token, sortBy="d,lastSeen")
    mine = [e for e in events["events"] if e["objectMeta"]["name"] == event_name]
    assert [(e["reason"], e["type"], e["objectKind"]) for e in mine] == [
        ("Rebooted", "Warning", "Node")]


def test_node_rights_and_missing(gateway, admin_token, editor_token, norights_token):
    for path in ("/api/v1/node", "/api/v1/node/sim-node-1", "/api/v1/node/sim-node-1/pod",
                 "/api/v1/node/sim-node-1/event"):
        for token in (editor_token, norights_token):
            reply = gateway.get(path, token=token)
            assert reply.status == 403, (path, reply)
            assert reply.json()["reason"] == "Forbidden"
    for suffix in ("", "/pod", "/event"):
        assert gateway.get("/api/v1/node/no-such-node" + suffix,
                           token=admin_token).status == 404
    assert gateway.get("/api/v1/node", token=admin_token,
                       params={"sortBy": "z,name"}).status == 400


def test_event_lists(cluster, gateway, namespace, other_namespace, admin_token):
    target = {"kind": "Pod", "name": "p", "namespace": namespace}
    kube.event(cluster, namespace, "e1", target, "Started", "first", type_="Normal",
               first="2024-05-01T10:00:00Z", last="2024-05-01T12:00:00Z", count=3)
    kube.event(cluster, namespace, "e2", target, "FailedSync", "second",
               first="2024-05-01T11:00:00Z")
    kube.event(cluster, other_namespace, "e3", dict(target, namespace=other_namespace),
               "Pulled", "third", type_="Normal", first="2024-05-01T09:00:00Z")

    body = get(gateway, "/api/v1/event/" + namespace, admin_token, sortBy="d,lastSeen",
                  filterBy="reason,nomatch")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    assert [e["objectMeta"]["name"] for e in body["events"]] == ["e1", "e2"]
    e1, e2 = body["events"]
    assert (e1["count"], e1["firstSeen"], e1["lastSeen"], e1["type"]) == (
        3, "2024-05-01T10:00:00Z", "2024-05-01T12:00:00Z", "Normal")
    assert e2["type"] == "Warning"  # derived from the reason "FailedSync"

    both = get(gateway, "/api/v1/event/%s,%s" % (namespace, other_namespace), admin_token,
                  sortBy="a,firstSeen")
    assert [e["objectMeta"]["name"] for e in both["events"]] == ["e3", "e1", "e2"]
    paged = get(gateway, "/api/v1/event/%s,%s" % (namespace, other_namespace), admin_token,
                   sortBy="a,reason", itemsPerPage="1", page="2")
    assert paged["listMeta"] == {"totalItems": 3}
    assert [e["reason"] for e in paged["events"]] == ["Pulled"]
    everything = get(gateway, "/api/v1/event", admin_token, page="0")
    assert {"e1", "e2", "e3"} <= {e["objectMeta"]["name"] for e in everything["events"]}


def test_event_rights(gateway, namespace, admin_token, editor_token, norights_token):
    usable_only(gateway, "/api/v1/event", editor_token)
    usable_only(gateway, "/api/v1/event/%20", editor_token)
    assert gateway.get("/api/v1/event/team-a", token=editor_token).status == 200
    reply = gateway.get("/api/v1/event/" + namespace, token=norights_token)
    assert reply.status == 403 and 'cannot list resource "events"' in reply.json()["message"]
    assert gateway.get("/api/v1/event/" + namespace, token=admin_token,
                       params={"itemsPerPage": "-5"}).status == 400
    assert gateway.get("/api/v1/event").status == 401
