"""Pod routes: list, detail, container, event, persistentvolumeclaim."""

import base64

from tests.resources import kube
from tests.resources.checks import usable_only


def seed_pods(cluster, ns):
    """Two running pods on simulated nodes and one pending pod bound to a missing node."""
    kube.pod(cluster, ns, "web-1", labels={"app": "web"})
    kube.pod(cluster, ns, "web-2", labels={"app": "web"},
             containers=[kube.container("app", "nginx:1.19"),
                         kube.container("side", "busybox:1.32")])
    stuck = kube.pod(cluster, ns, "stuck", nodeName="no-such-node")
    kube.wait_pods(cluster, ns, "app=web", 2)
    return stuck


def test_pod_list_shape_and_values(cluster, gateway, namespace, admin_token):
    stuck = seed_pods(cluster, namespace)
    kube.event(cluster, namespace, "stuck.1", kube.involved(stuck, "Pod"), "FailedMount",
               "volume trouble", type_="Warning")
    kube.event(cluster, namespace, "stuck.2", kube.involved(stuck, "Pod"), "BackOff",
               "backing off")  # no type: derived from the reason
    kube.event(cluster, namespace, "stuck.3", kube.involved(stuck, "Pod"), "FailedMount",
               "again", type_="Warning")

    reply = gateway.get("/api/v1/pod/" + namespace, token=admin_token,
                        params={"sortBy": "a,name"})
    assert reply.status == 200, reply
    body = reply.json()
    assert body["listMeta"] == {"totalItems": 3}
    assert body["errors"] == [] and body["cumulativeMetrics"] == []
    assert kube.names(body, "pods") == ["stuck", "web-1", "web-2"]
    assert body["items"] == body["pods"]
    stuck_item, web1, web2 = body["pods"]

    assert web1["typeMeta"] == {"kind": "pod"}
    assert web1["objectMeta"]["namespace"] == namespace
    assert web1["objectMeta"]["labels"] == {"app": "web"}
    assert web1["objectMeta"]["creationTimestamp"].endswith("Z")
    assert web1["status"] == "Running" and web1["restartCount"] == 0
    assert web1["nodeName"].startswith("sim-node-")
    assert web1["metrics"] is None and web1["warnings"] == []
    assert web1["containerImages"] == ["nginx:1.19"]
    assert web1["containerStatuses"] == [{"name": "app", "state": "Running", "ready": True}]
    assert web1["allocatedResources"] == {
        "cpuRequests": 50, "cpuLimits": 200, "memoryRequests": 32 * 2 ** 20,
        "memoryLimits": 128 * 2 ** 20, "gpuRequests": [], "gpuLimits": []}
    assert web2["allocatedResources"]["cpuRequests"] == 100
    assert web2["containerImages"] == ["nginx:1.19", "busybox:1.32"]

    assert stuck_item["status"] == "Pending" and stuck_item["nodeName"] == "no-such-node"
    assert stuck_item["containerStatuses"] == []
    # Warning events of the not-ready pod, one per reason; BackOff is derived as a Warning.
    assert sorted((w["reason"], w["type"]) for w in stuck_item["warnings"]) == [
        ("BackOff", "Warning"), ("FailedMount", "Warning")]
    assert stuck_item["warnings"][0]["objectMeta"] == {"creationTimestamp": None}
    assert body["status"] == {"running": 2, "pending": 0, "failed": 1, "succeeded": 0,
                              "terminating": 0}


def test_pod_list_dataselect(cluster, gateway, namespace, admin_token):
    seed_pods(cluster, namespace)
    path = "/api/v1/pod/" + namespace

    def names(**params):
        reply = gateway.get(path, token=admin_token, params=params)
        assert reply.status == 200, reply
        return reply.json()["listMeta"]["totalItems"], kube.names(reply.json(), "pods")

    assert names(sortBy="d,name") == (3, ["web-2", "web-1", "stuck"])
    assert names(sortBy="d,name", itemsPerPage="2", page="2") == (3, ["stuck"])
    assert names(sortBy="a,name", itemsPerPage="2", page="3") == (3, [])
    assert names(sortBy="a,name", itemsPerPage="1", page="0") == (3, ["stuck", "web-1", "web-2"])
    assert names(filterBy="name,web", sortBy="a,name") == (2, ["web-1", "web-2"])
    assert names(filterBy="status,Pending") == (1, ["stuck"])
    assert names(filterBy="name,web,status,Pend") == (0, [])
    assert names(filterBy="nosuch,x") == (0, [])
    assert names(filterBy="namespace," + namespace, sortBy="a,status,d,name") == (
        3, ["stuck", "web-2", "web-1"])
    # Filtering on a time property works (it crashed upstream).
    total, _ = names(filterBy="creationTimestamp,T")
    assert total == 3


def test_pod_list_bad_parameters_are_400(gateway, namespace, admin_token):
    for params in ({"sortBy": "up,name"}, {"sortBy": "a"}, {"filterBy": "name"},
                   {"itemsPerPage": "x"}, {"page": "-2"}, {"itemsPerPage": "-1"}):
        reply = gateway.get("/api/v1/pod/" + namespace, token=admin_token, params=params)
        assert reply.status == 400, (params, reply)
        assert reply.json()["reason"] == "BadRequest" and reply.json()["message"]


def test_pod_list_namespaces(cluster, gateway, namespace, other_namespace, admin_token):
    kube.pod(cluster, namespace, "one", nodeName="no-such-node")
    kube.pod(cluster, other_namespace, "two", nodeName="no-such-node")

    def listed(segment):
        reply = gateway.get("/api/v1/pod/" + segment, token=admin_token,
                            params={"filterBy": "name,o", "page": "0"})
        assert reply.status == 200, reply
        return {(p["objectMeta"]["namespace"], p["objectMeta"]["name"])
                for p in reply.json()["pods"]}

    both = {(namespace, "one"), (other_namespace, "two")}
    assert listed("%s,%s" % (namespace, other_namespace)) == both
    assert listed(" %s , ,%s " % (namespace, other_namespace)) == both
    assert listed(namespace) == {(namespace, "one")}
    assert both <= listed("%20")      # a single space: all namespaces, as the UI sends it
    assert both <= listed("")
    all_ns = gateway.get("/api/v1/pod", token=admin_token, params={"page": "0"})
    assert all_ns.status == 200 and both <= {
        (p["objectMeta"]["namespace"], p["objectMeta"]["name"]) for p in all_ns.json()["pods"]}


def test_pod_rights(cluster, gateway, namespace, editor_token, norights_token):
    reply = gateway.get("/api/v1/pod/" + namespace, token=norights_token)
    assert reply.status == 403
    body = reply.json()
    assert body["reason"] == "Forbidden" and body["code"] == 403
    assert 'User "nobody" cannot list resource "pods"' in body["message"]
    assert namespace in body["message"]

    # The editor may list team-a only: all namespaces, or team-a plus another, is a 403.
    usable_only(gateway, "/api/v1/pod", editor_token)
    usable_only(gateway, "/api/v1/pod/%20", editor_token)
    assert gateway.get("/api/v1/pod/team-a," + namespace, token=editor_token).status == 403
    ok = gateway.get("/api/v1/pod/team-a", token=editor_token)
    assert ok.status == 200 and ok.json()["errors"] == []

    assert gateway.get("/api/v1/pod/" + namespace).status == 401
    assert gateway.get("/api/v1/pod/" + namespace,
                       headers={"Authorization": "Basic eDp5"}).status == 401


def test_pod_detail(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns,
                {"metadata": {"name": "settings"}, "data": {"mode": "fast", "level": "3"}})
    kube.create(cluster, "/api/v1/namespaces/%s/secrets" % ns,
                {"metadata": {"name": "creds"}, "stringData": {"password": "s3cret"}})
    kube.create(cluster, "/api/v1/namespaces/%s/persistentvolumeclaims" % ns, {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}})
    kube.create(cluster, "/api/v1/namespaces/%s/persistentvolumeclaims" % ns, {
        "metadata": {"name": "unused"},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}})
    env = [
        {"name": "PLAIN", "value": "x"},
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "password"}}},
        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "CPU_MILLIS", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu",
                                                                  "divisor": "1m"}}},
        {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory",
                                                           "divisor": "1Mi"}}},
    ]
    app = kube.container("app", "nginx:1.19", env=env,
                         envFrom=[{"configMapRef": {"name": "settings"}, "prefix": "S_"}],
                         command=["nginx"], args=["-g", "daemon off;"],
                         volumeMounts=[{"name": "data", "mountPath": "/data"}])
    kube.pod(cluster, ns, "detailed", labels={"app": "d", "tier": "x"},
             containers=[app], volumes=[{"name": "data",
                                         "persistentVolumeClaim": {"claimName": "data"}}],
             nodeName="no-such-node")

    reply = gateway.get("/api/v1/pod/%s/detailed" % ns, token=admin_token)
    assert reply.status == 200, reply
    d = reply.json()
    assert d["objectMeta"]["name"] == "detailed" and d["typeMeta"] == {"kind": "pod"}
    assert d["podPhase"] == "Pending" and d["nodeName"] == "no-such-node"
    assert d["serviceAccountName"] == "default" and d["restartCount"] == 0
    assert d["qosClass"] == "Burstable" and d["errors"] == [] and d["metrics"] == []
    assert "controller" not in d  # no owner (upstream sent a zero-valued object)
    [c] = d["containers"]
    assert d["initContainers"] == []
    assert (c["name"], c["image"], c["commands"], c["args"]) == (
        "app", "nginx:1.19", ["nginx"], ["-g", "daemon off;"])
    values = {e["name"]: e["value"] for e in c["env"]}
    assert values == {
        "PLAIN": "x", "MODE": "fast", "PASSWORD": base64.b64encode(b"s3cret").decode(),
        "POD": "detailed", "TIER": "x", "NODE": "no-such-node", "CPU_MILLIS": "50", "MEM": "128",
        "S_level": "3", "S_mode": "fast"}
    assert c["env"][0]["valueFrom"] is None
    assert c["env"][-1]["valueFrom"] == {"configMapKeyRef": {"name": "settings", "key": "mode"}}
    assert c["volumeMounts"][0]["volume"]["persistentVolumeClaim"] == {"claimName": "data"}
    assert c["volumeMounts"][0]["mountPath"] == "/data"
    assert c["resources"] == kube.POD_RESOURCES
    assert d["persistentVolumeClaimList"]["listMeta"] == {"totalItems": 1}
    assert d["persistentVolumeClaimList"]["items"][0]["objectMeta"]["name"] == "data"
    assert d["eventList"]["events"] == [] and d["eventList"]["listMeta"] == {"totalItems": 0}

    claims = gateway.get("/api/v1/pod/%s/detailed/persistentvolumeclaim" % ns,
                         token=admin_token).json()
    assert [(c["objectMeta"]["name"], c["status"], c["accessModes"]) for c in claims["items"]] \
        == [("data", "Pending", ["ReadWriteOnce"])]

    containers = gateway.get("/api/v1/pod/%s/detailed/container" % ns, token=admin_token)
    assert containers.status == 200 and containers.json() == {"containers": ["app"]}


def test_pod_detail_controller_and_events(cluster, gateway, namespace, admin_token):
    rs = kube.apps(cluster, namespace, "replicasets", "owner", {"app": "owned"}, replicas=2)
    [pod, _] = kube.wait_pods(cluster, namespace, "app=owned", 2)
    name = pod["metadata"]["name"]
    kube.event(cluster, namespace, "ev-old", kube.involved(pod, "Pod"), "Pulled", "old one",
               type_="Normal", first="2024-05-01T10:00:00Z")
    kube.event(cluster, namespace, "ev-new", kube.involved(pod, "Pod"), "Killing", "new one",
               type_="Normal", first="2024-05-02T10:00:00Z")
    kube.event(cluster, namespace, "ev-other", kube.involved(rs, "ReplicaSet"), "Other",
               "not about the pod")

    d = gateway.get("/api/v1/pod/%s/%s" % (namespace, name), token=admin_token).json()
    owner = d["controller"]
    assert owner["objectMeta"]["name"] == "owner"
    assert owner["typeMeta"] == {"kind": "replicaset", "scalable": True}
    assert owner["pods"]["current"] == 2 and owner["pods"]["running"] == 2
    assert owner["containerImages"] == ["nginx:1.19"]
    assert d["podPhase"] == "Running"
    assert d["conditions"] and {c["type"] for c in d["conditions"]} >= {"Ready"}
    assert {e["reason"] for e in d["eventList"]["events"]} >= {"Pulled", "Killing"}

    events = gateway.get("/api/v1/pod/%s/%s/event" % (namespace, name), token=admin_token,
                         params={"sortBy": "d,lastSeen", "filterBy": "reason,nothing"}).json()
    mine = [e for e in events["events"] if e["objectMeta"]["name"] in ("ev-old", "ev-new")]
    assert [e["objectMeta"]["name"] for e in mine] == ["ev-new", "ev-old"]  # filter ignored
    assert "ev-other" not in [e["objectMeta"]["name"] for e in events["events"]]
    new = mine[0]
    assert new["typeMeta"] == {"kind": "event"}
    assert (new["message"], new["reason"], new["type"], new["count"]) == (
        "new one", "Killing", "Normal", 1)
    assert (new["firstSeen"], new["lastSeen"]) == ("2024-05-02T10:00:00Z",) * 2
    assert (new["sourceComponent"], new["sourceHost"]) == ("tests", "here")
    assert (new["objectKind"], new["objectName"], new["objectNamespace"]) == (
        "Pod", name, namespace)


def test_pod_missing_is_404(gateway, namespace, admin_token):
    for suffix in ("", "/container", "/event", "/persistentvolumeclaim"):
        reply = gateway.get("/api/v1/pod/%s/nope%s" % (namespace, suffix), token=admin_token)
        assert reply.status == 404, (suffix, reply)
        assert reply.json()["reason"] == "NotFound"
        assert 'pods "nope" not found' in reply.json()["message"]


def test_pod_routes_forbidden(cluster, gateway, namespace, norights_token):
    kube.pod(cluster, namespace, "p", nodeName="no-such-node")
    for suffix in ("", "/container", "/event", "/persistentvolumeclaim"):
        reply = gateway.get("/api/v1/pod/%s/p%s" % (namespace, suffix), token=norights_token)
        assert reply.status == 403, (suffix, reply)
        assert 'User "nobody" cannot get resource "pods"' in reply.json()["message"]


def test_pod_detail_with_partial_rights(cluster, gateway, namespace):
    """May read pods but not events or PVCs: the detail answers, with the 403s in errors."""
    kube.pod(cluster, namespace, "p", nodeName="no-such-node",
             volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "c"}}])
    token = kube.grant(cluster, namespace, "pod-reader",
                       [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}])
    reply = gateway.get("/api/v1/pod/%s/p" % namespace, token=token)
    assert reply.status == 200, reply
    d = reply.json()
    kinds = sorted(e["ErrStatus"]["details"]["kind"] for e in d["errors"])
    assert kinds == ["events", "persistentvolumeclaims"]
    for e in d["errors"]:
        assert e["ErrStatus"]["code"] == 403 and e["ErrStatus"]["reason"] == "Forbidden"
        assert e["ErrStatus"]["status"] == "Failure" and "cannot list" in e["ErrStatus"]["message"]
    assert d["eventList"]["events"] == [] and d["persistentVolumeClaimList"]["items"] == []

    pods = gateway.get("/api/v1/pod/" + namespace, token=token)
    assert pods.status == 200
    assert [e["ErrStatus"]["details"]["kind"] for e in pods.json()["errors"]] == ["events"]
    assert kube.names(pods.json(), "pods") == ["p"]
    # The sublist's own content is forbidden: that is the request's 403.
    assert gateway.get("/api/v1/pod/%s/p/event" % namespace, token=token).status == 403
