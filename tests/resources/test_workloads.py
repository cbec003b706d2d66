"""Deployment, ReplicaSet, ReplicationController, DaemonSet and StatefulSet routes."""

import pytest

from tests.resources import kube
from tests.resources.checks import get, usable_only

WORKLOAD_LISTS = [("deployment", "deployments", "pods"), ("replicaset", "replicaSets", "podInfo"),
                  ("replicationcontroller", "replicationControllers", "podInfo"),
                  ("daemonset", "daemonSets", "podInfo"), ("statefulset", "statefulSets",
                                                           "podInfo")]
SUFFIXES = {"deployment": ("", "/event", "/oldreplicaset", "/newreplicaset"),
            "replicaset": ("", "/pod", "/service", "/event"),
            "replicationcontroller": ("", "/pod", "/service", "/event"),
            "daemonset": ("", "/pod", "/service", "/event"),
            "statefulset": ("", "/pod", "/event")}


def stuck_rollout(cluster, ns):
    """A deployment whose second revision never becomes available: old and new replica sets.
    Its crash-looping pod is ready for a moment now and then; minReadySeconds keeps that from
    counting, so the rollout stays where it is however late the test reads."""
    labels = {"app": "shop"}
    dep = kube.apps(cluster, ns, "deployments", "shop", labels, replicas=2,
                    strategy={"type": "RollingUpdate",
                              "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                    minReadySeconds=300)
    kube.wait_pods(cluster, ns, "app=shop", 2)
    path = "/apis/apps/v1/namespaces/%s/deployments/shop" % ns
    status, _ = cluster.request("PATCH", path, {"spec": {"template": {"metadata": {
        "annotations": {"sim.dashboard.io/crashloop": "app"}}}}})
    assert status == 200
    kube.wait_object(cluster, path, lambda d: d["status"].get("replicas") == 3 and d["status"].get(
        "updatedReplicas") == 1, what="the rollout to start")
    return dep


def test_deployment_routes(cluster, gateway, namespace, admin_token, cache_caught_up):
    ns = namespace
    stuck_rollout(cluster, ns)
    kube.create(cluster, "/apis/autoscaling/v1/namespaces/%s/horizontalpodautoscalers" % ns, {
        "metadata": {"name": "shop-hpa"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "shop"},
                 "minReplicas": 2, "maxReplicas": 4, "targetCPUUtilizationPercentage": 60}})
    kube.create(cluster, "/apis/autoscaling/v1/namespaces/%s/horizontalpodautoscalers" % ns, {
        "metadata": {"name": "other-hpa"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": "other"}, "maxReplicas": 3}})
    cache_caught_up("deployment", "replicaset", "pod", "event", "horizontalpodautoscaler")

    body = get(gateway, "/api/v1/deployment/" + ns, admin_token)
    assert body["listMeta"] == {"totalItems": 1} and body["errors"] == []
    assert body["cumulativeMetrics"] == []
    [item] = body["deployments"]
    assert item["typeMeta"] == {"kind": "deployment", "scalable": True, "restartable": True}
    assert item["containerImages"] == ["nginx:1.19"] and item["initContainerImages"] is None
    info = item["pods"]
    assert info["desired"] == 2 and info["current"] == 3  # two old pods and one surged new one
    assert info["running"] + info["pending"] + info["failed"] == 3
    assert body["status"]["running"] + body["status"]["pending"] + body["status"]["failed"] == 1

    d = get(gateway, "/api/v1/deployment/%s/shop" % ns, admin_token)
    assert d["objectMeta"]["name"] == "shop" and d["selector"] == {"app": "shop"}
    assert d["strategy"] == "RollingUpdate"
    assert d["rollingUpdateStrategy"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert d["statusInfo"]["replicas"] == 3 and d["revisionHistoryLimit"] == 10
    assert d["minReadySeconds"] == 300 and d["errors"] == []
    assert {c["type"] for c in d["conditions"]} >= {"Progressing"}
    assert all(set(c) == {"type", "status", "lastProbeTime", "lastTransitionTime", "reason",
                          "message"} for c in d["conditions"])

    new = get(gateway, "/api/v1/deployment/%s/shop/newreplicaset" % ns, admin_token)
    old = get(gateway, "/api/v1/deployment/%s/shop/oldreplicaset" % ns, admin_token)
    assert new["typeMeta"] == {"kind": "replicaset", "scalable": True}
    assert new["objectMeta"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert new["podInfo"]["desired"] == 1
    assert old["listMeta"] == {"totalItems": 1}
    [old_rs] = old["replicaSets"]
    assert old_rs["objectMeta"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert old_rs["podInfo"]["desired"] == 2 and old_rs["podInfo"]["running"] == 2
    assert old["cumulativeMetrics"] == []

    events = get(gateway, "/api/v1/deployment/%s/shop/event" % ns, admin_token)
    assert events["listMeta"]["totalItems"] >= 2
    assert {e["reason"] for e in events["events"]} == {"ScalingReplicaSet"}
    assert {e["objectKind"] for e in events["events"]} == {"Deployment"}

    hpas = get(gateway, "/api/v1/deployment/%s/shop/horizontalpodautoscaler" % ns,
                  admin_token)
    assert hpas["listMeta"] == {"totalItems": 1}
    [hpa] = hpas["horizontalpodautoscalers"]
    assert hpa["objectMeta"]["name"] == "shop-hpa"
    assert hpa["typeMeta"] == {"kind": "horizontalpodautoscaler"}
    assert hpa["scaleTargetRef"] == {"kind": "Deployment", "name": "shop"}
    assert (hpa["minReplicas"], hpa["maxReplicas"], hpa["targetCPUUtilizationPercentage"]) == (
        2, 4, 60)
    none = get(gateway, "/api/v1/statefulset/%s/shop/horizontalpodautoscaler" % ns,
                  admin_token)
    assert none["listMeta"] == {"totalItems": 0} and none["horizontalpodautoscalers"] == []


def test_newreplicaset_without_match_is_a_zero_object(cluster, gateway, namespace, admin_token):
    kube.apps(cluster, namespace, "deployments", "idle", {"app": "idle"}, replicas=0,
              paused=True)
    body = get(gateway, "/api/v1/deployment/%s/idle/newreplicaset" % namespace, admin_token)
    assert body["objectMeta"] == {"creationTimestamp": None} and body["typeMeta"] == {}
    assert body["podInfo"]["current"] == 0 and body["podInfo"]["warnings"] == []


def test_replicaset_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    rs = kube.apps(cluster, ns, "replicasets", "cache", {"app": "cache", "tier": "db"},
                   replicas=2)
    kube.wait_pods(cluster, ns, "app=cache", 2)
    kube.service(cluster, ns, "cache-svc", {"app": "cache"})
    kube.service(cluster, ns, "other-svc", {"app": "cache", "tier": "web"})
    kube.service(cluster, ns, "no-selector", {})
    kube.event(cluster, ns, "cache.1", kube.involved(rs, "ReplicaSet"), "SuccessfulCreate",
               "created", type_="Normal")

    body = get(gateway, "/api/v1/replicaset/" + ns, admin_token)
    [item] = body["replicaSets"]
    assert item["typeMeta"] == {"kind": "replicaset", "scalable": True}
    assert item["podInfo"] == {"current": 2, "desired": 2, "running": 2, "pending": 0,
                               "failed": 0, "succeeded": 0, "warnings": []}
    assert body["status"] == {"running": 1, "pending": 0, "failed": 0, "succeeded": 0,
                              "terminating": 0}

    d = get(gateway, "/api/v1/replicaset/%s/cache" % ns, admin_token)
    assert d["selector"] == {"matchLabels": {"app": "cache", "tier": "db"}}
    assert d["horizontalPodAutoscalerList"]["listMeta"] == {"totalItems": 0}
    assert d["errors"] == [] and d["podInfo"]["running"] == 2

    pods = get(gateway, "/api/v1/replicaset/%s/cache/pod" % ns, admin_token)
    assert pods["listMeta"] == {"totalItems": 2}
    assert all(p["objectMeta"]["ownerReferences"] == [{"kind": "ReplicaSet", "name": "cache"}]
               for p in pods["pods"])
    assert pods["status"] == {"running": 0, "pending": 0, "failed": 0, "succeeded": 0,
                              "terminating": 0}  # child pod lists carry no status counts

    services = get(gateway, "/api/v1/replicaset/%s/cache/service" % ns, admin_token)
    assert kube.names(services, "services") == ["cache-svc"]
    [svc] = services["services"]
    assert svc["typeMeta"] == {"kind": "service"} and svc["type"] == "ClusterIP"
    assert svc["internalEndpoint"] == {"host": "cache-svc." + ns,
                                       "ports": [{"port": 80, "protocol": "TCP", "nodePort": 0}]}
    assert svc["selector"] == {"app": "cache"} and svc["externalEndpoints"] == []

    events = get(gateway, "/api/v1/replicaset/%s/cache/event" % ns, admin_token)
    assert "cache.1" in [e["objectMeta"]["name"] for e in events["events"]]


def test_replicationcontroller_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    rc = kube.replication_controller(cluster, ns, "legacy", {"app": "legacy"}, replicas=1)
    kube.wait_pods(cluster, ns, "app=legacy", 1)
    kube.service(cluster, ns, "legacy", {"app": "legacy"})
    kube.event(cluster, ns, "legacy.1", kube.involved(rc, "ReplicationController"), "Hello",
               "hi", type_="Normal")

    [item] = get(gateway, "/api/v1/replicationcontroller/" + ns,
                    admin_token)["replicationControllers"]
    assert item["typeMeta"] == {"kind": "replicationcontroller", "scalable": True}
    assert (item["podInfo"]["current"], item["podInfo"]["desired"]) == (1, 1)

    d = get(gateway, "/api/v1/replicationcontroller/%s/legacy" % ns, admin_token)
    assert d["labelSelector"] == {"app": "legacy"} and d["errors"] == []
    pods = get(gateway, "/api/v1/replicationcontroller/%s/legacy/pod" % ns, admin_token)
    assert pods["listMeta"] == {"totalItems": 1}
    services = get(gateway, "/api/v1/replicationcontroller/%s/legacy/service" % ns,
                      admin_token)
    assert kube.names(services, "services") == ["legacy"]
    events = get(gateway, "/api/v1/replicationcontroller/%s/legacy/event" % ns, admin_token)
    assert {e["reason"] for e in events["events"]} == {"Hello", "SuccessfulCreate"}


def test_daemonset_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    ds = kube.apps(cluster, ns, "daemonsets", "agent", {"app": "agent"})
    kube.wait_pods(cluster, ns, "app=agent", len(cluster.nodes))
    kube.service(cluster, ns, "agent", {"app": "agent"}, ports=((9100, "TCP"),))
    kube.event(cluster, ns, "agent.1", kube.involved(ds, "DaemonSet"), "Hello", "hi")

    [item] = get(gateway, "/api/v1/daemonset/" + ns, admin_token)["daemonSets"]
    assert item["typeMeta"] == {"kind": "daemonset", "restartable": True}
    n = len(cluster.nodes)
    assert (item["podInfo"]["current"], item["podInfo"]["desired"],
            item["podInfo"]["running"]) == (n, n, n)

    d = get(gateway, "/api/v1/daemonset/%s/agent" % ns, admin_token)
    assert d["labelSelector"] == {"matchLabels": {"app": "agent"}} and d["errors"] == []
    pods = get(gateway, "/api/v1/daemonset/%s/agent/pod" % ns, admin_token,
                  sortBy="a,name")
    assert pods["listMeta"] == {"totalItems": n}
    assert sorted(p["nodeName"] for p in pods["pods"]) == sorted(cluster.nodes)
    services = get(gateway, "/api/v1/daemonset/%s/agent/service" % ns, admin_token)
    assert kube.names(services, "services") == ["agent"]
    events = get(gateway, "/api/v1/daemonset/%s/agent/event" % ns, admin_token)
    assert {e["reason"] for e in events["events"]} == {"Hello", "SuccessfulCreate"}


def test_statefulset_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    ss = kube.apps(cluster, ns, "statefulsets", "db", {"app": "db"}, replicas=2,
                   serviceName="db")
    kube.wait_pods(cluster, ns, "app=db", 2)
    kube.event(cluster, ns, "db.1", kube.involved(ss, "StatefulSet"), "Hello", "hi")

    [item] = get(gateway, "/api/v1/statefulset/" + ns, admin_token)["statefulSets"]
    assert item["typeMeta"] == {"kind": "statefulset", "scalable": True, "restartable": True}
    assert (item["podInfo"]["current"], item["podInfo"]["desired"]) == (2, 2)
    d = get(gateway, "/api/v1/statefulset/%s/db" % ns, admin_token)
    assert d["errors"] == [] and d["podInfo"]["running"] == 2
    pods = get(gateway, "/api/v1/statefulset/%s/db/pod" % ns, admin_token, sortBy="a,name")
    assert kube.names(pods, "pods") == ["db-0", "db-1"]
    events = get(gateway, "/api/v1/statefulset/%s/db/event" % ns, admin_token)
    assert "db.1" in [e["objectMeta"]["name"] for e in events["events"]]


def test_workload_list_warnings_and_failed_status(cluster, gateway, namespace, admin_token):
    """A replica set whose pod cannot run: the Warning event shows in PodInfo, status failed."""
    ns = namespace
    kube.apps(cluster, ns, "replicasets", "broken", {"app": "broken"}, replicas=1,
              template=kube.template({"app": "broken"}, nodeName="no-such-node"))
    [pod] = kube.wait_pods(cluster, ns, "app=broken", 1, phase="Pending")
    kube.event(cluster, ns, "broken.1", kube.involved(pod, "Pod"), "FailedScheduling",
               "nowhere to run", type_="Warning")

    def shown():   # the gateway's cache catches up with the pod and the event a moment later
        body = get(gateway, "/api/v1/replicaset/" + ns, admin_token)
        info = [item["podInfo"] for item in body["replicaSets"]]
        return body if len(info) == 1 and info[0]["pending"] and info[0]["warnings"] else None

    body = cluster.wait_for(shown, timeout=30, what="the pending pod and its warning in the list")
    [item] = body["replicaSets"]
    assert item["podInfo"]["pending"] == 1
    assert [(w["reason"], w["message"]) for w in item["podInfo"]["warnings"]] == [
        ("FailedScheduling", "nowhere to run")]
    assert body["status"]["failed"] == 1


@pytest.mark.parametrize("kind,key,_info", WORKLOAD_LISTS)
def test_workload_rights_and_missing(gateway, namespace, admin_token, editor_token,
                                     norights_token, kind, key, _info):
    reply = gateway.get("/api/v1/%s/%s" % (kind, namespace), token=norights_token)
    assert reply.status == 403 and 'User "nobody" cannot list' in reply.json()["message"]
    usable_only(gateway, "/api/v1/" + kind, editor_token)
    ok = gateway.get("/api/v1/%s/team-a" % kind, token=editor_token)
    assert ok.status == 200 and key in ok.json() and ok.json()["errors"] == []
    for suffix in SUFFIXES[kind]:
        reply = gateway.get("/api/v1/%s/%s/any%s" % (kind, namespace, suffix),
                            token=norights_token)
        assert reply.status == 403, (suffix, reply)
        assert 'User "nobody" cannot get' in reply.json()["message"]
    missing = gateway.get("/api/v1/%s/%s/nope" % (kind, namespace), token=admin_token)
    assert missing.status == 404 and missing.json()["reason"] == "NotFound"
    assert gateway.get("/api/v1/%s/%s/nope/event" % (kind, namespace),
                       token=admin_token).status == 404
    assert gateway.get("/api/v1/%s/%s" % (kind, namespace), token=admin_token,
                       params={"itemsPerPage": "many"}).status == 400
    assert gateway.get("/api/v1/" + kind).status == 401


def test_workload_lists_across_namespaces(cluster, gateway, namespace, other_namespace,
                                          admin_token):
    kube.apps(cluster, namespace, "deployments", "a", {"app": "a"}, replicas=0)
    kube.apps(cluster, other_namespace, "deployments", "b", {"app": "b"}, replicas=0)
    body = get(gateway, "/api/v1/deployment/%s,%s" % (namespace, other_namespace),
                  admin_token, sortBy="a,name", filterBy="namespace,t-")
    assert [(d["objectMeta"]["namespace"], d["objectMeta"]["name"])
            for d in body["deployments"]] == [(namespace, "a"), (other_namespace, "b")]
    body = get(gateway, "/api/v1/deployment/%20", admin_token, filterBy="name,b",
                  sortBy="a,name", page="0")
    assert (other_namespace, "b") in [(d["objectMeta"]["namespace"], d["objectMeta"]["name"])
                                      for d in body["deployments"]]


def test_deployments_with_partial_rights(cluster, gateway, namespace):
    """May list deployments only: 200, deployments present, 403s for the related lists."""
    kube.apps(cluster, namespace, "deployments", "web", {"app": "web"}, replicas=1)
    kube.wait_pods(cluster, namespace, "app=web", 1)
    token = kube.grant(cluster, namespace, "deploy-reader", [
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list", "get"]}])
    reply = gateway.get("/api/v1/deployment/" + namespace, token=token)
    assert reply.status == 200, reply
    body = reply.json()
    [item] = body["deployments"]
    assert item["pods"]["current"] == 1 and item["pods"]["desired"] == 1
    assert item["pods"]["running"] == 0 and item["pods"]["warnings"] == []
    assert sorted(e["ErrStatus"]["details"]["kind"] for e in body["errors"]) == [
        "events", "pods", "replicasets"]
    for e in body["errors"]:
        status = e["ErrStatus"]
        assert status["code"] == 403 and status["reason"] == "Forbidden"
        assert status["metadata"] == {} and status["status"] == "Failure"
        assert "system:serviceaccount:%s:deploy-reader" % namespace in status["message"]

    d = gateway.get("/api/v1/deployment/%s/web" % namespace, token=token)
    assert d.status == 200 and len(d.json()["errors"]) == 3
    # A sublist whose content is forbidden is the request's 403.
    assert gateway.get("/api/v1/deployment/%s/web/oldreplicaset" % namespace,
                       token=token).status == 403


def test_autoscalers_route_rights(gateway, namespace, admin_token, editor_token,
                                  norights_token):
    path = "/api/v1/deployment/%s/web/horizontalpodautoscaler"
    reply = gateway.get(path % namespace, token=norights_token)
    assert reply.status == 403
    assert 'cannot list resource "horizontalpodautoscalers"' in reply.json()["message"]
    ok = gateway.get(path % "team-a", token=editor_token)
    assert ok.status == 200 and ok.json()["horizontalpodautoscalers"] == []
    assert gateway.get(path % namespace, token=admin_token,
                       params={"page": "x"}).status == 400
    assert gateway.get(path % namespace).status == 401
