"""/api/v1/_raw/{kind}[/namespace/{ns}]/name/{name}: GET, PUT (create or update), DELETE."""

import json
import secrets

from tests.gateway.helpers import assert_error
from tests.resources import kube
from tests.writes.helpers import (absent, bad, deleted_in_foreground, forbidden, generation, read,
                                  unauthorized, version)

DEPLOYMENTS = "/apis/apps/v1/namespaces/%s/deployments/"


def raw(ns, name, kind="deployment"):
    return "/api/v1/_raw/%s/namespace/%s/name/%s" % (kind, ns, name)


def test_get_returns_the_object_as_the_api_server_has_it(cluster, gateway, namespace,
                                                         admin_token):
    kube.apps(cluster, namespace, "deployments", "web", {"app": "web"})
    reply = gateway.get(raw(namespace, "web"), token=admin_token)
    assert reply.status == 200, reply
    live = read(cluster, DEPLOYMENTS % namespace + "web")
    got = reply.json()
    assert got["kind"] == "Deployment" and got["apiVersion"] == "apps/v1"
    assert got["metadata"]["uid"] == live["metadata"]["uid"]
    assert got["spec"] == live["spec"]
    unauthorized(gateway.get(raw(namespace, "web")))
    forbidden(gateway.get(raw(namespace, "web"), token=cluster.norights_token), "get",
              "deployments")
    missing = assert_error(gateway.get(raw(namespace, "nope"), token=admin_token), 404,
                           "NotFound")
    assert '"nope" not found' in missing["message"]
    bad(gateway.get(raw(namespace, "web", kind="nosuchkind"), token=admin_token), "unknown kind")
    bad(gateway.get("/api/v1/_raw/deployment/name/web", token=admin_token), "namespaced")
    bad(gateway.get("/api/v1/_raw/node/namespace/x/name/y", token=admin_token),
        "not namespaced")


def test_put_updates_through_a_patch_and_keeps_what_did_not_change(cluster, gateway,
                                                                   namespace, admin_token):
    kube.apps(cluster, namespace, "deployments", "web", {"app": "web"})
    path = DEPLOYMENTS % namespace + "web"
    # Nothing changed: nothing is written (a config map: no controller touches it).
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "still"}, "data": {"k": "v"}})
    still = gateway.get(raw(namespace, "still", "configmap"), token=admin_token).json()
    reply = gateway.request("PUT", raw(namespace, "still", "configmap"), token=admin_token,
                            body=still)
    assert reply.status == 204 and reply.data == b"", reply
    assert version(cluster, "/api/v1/namespaces/%s/configmaps/still" % namespace) == \
        still["metadata"]["resourceVersion"]
    edited = gateway.get(raw(namespace, "web"), token=admin_token).json()
    # Someone else changes the object meanwhile; the user's copy is stale.
    status, _ = cluster.request("PATCH", path, {"metadata": {"annotations": {"other": "x"}}},
                                content_type="application/merge-patch+json")
    assert status == 200
    edited["spec"]["replicas"] = 3
    edited["metadata"]["labels"] = {"edited": "yes"}
    del edited["metadata"]["managedFields"]
    reply = gateway.request("PUT", raw(namespace, "web"), token=admin_token, body=edited)
    assert reply.status == 204, reply
    live = read(cluster, path)
    assert live["spec"]["replicas"] == 3 and live["metadata"]["labels"] == {"edited": "yes"}
    assert live["metadata"]["managedFields"]  # server fields the copy lacked are kept
    # The stale copy lacked the other annotation: the whole edited object wins, as upstream.
    assert "other" not in (live["metadata"].get("annotations") or {})

    forbidden(gateway.request("PUT", raw(namespace, "web"), token=cluster.norights_token,
                              body=edited), "get", "deployments")
    unauthorized(gateway.request("PUT", raw(namespace, "web"), body=edited))


def test_put_creates_missing_objects_namespaced_and_cluster_wide(cluster, gateway, namespace,
                                                                 admin_token, cluster_objects):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"},
          "data": {"a": "1"}}
    reply = gateway.request("PUT", raw(namespace, "conf", "configmap"), token=admin_token,
                            body=cm)
    assert reply.status == 204, reply
    assert read(cluster, "/api/v1/namespaces/%s/configmaps/conf" % namespace)["data"] == \
        {"a": "1"}
    name = "raw-" + secrets.token_hex(4)
    path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + name
    cluster_objects.append(path)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}
    reply = gateway.request("PUT", "/api/v1/_raw/clusterrole/name/" + name, token=admin_token,
                            body=role)
    assert reply.status == 204, reply
    assert read(cluster, path)["rules"][0]["verbs"] == ["get"]
    forbidden(gateway.request("PUT", raw(namespace, "other", "configmap"),
                              token=cluster.norights_token, body=dict(
                                  cm, metadata={"name": "other"})), "get", "configmaps")
    assert absent(cluster, "/api/v1/namespaces/%s/configmaps/other" % namespace)
    # An invalid object is the API server's 422, and nothing is created.
    invalid = dict(cm, metadata={"name": "broken"}, data={"bad key!": "x"})
    body = assert_error(gateway.request("PUT", raw(namespace, "broken", "configmap"),
                                        token=admin_token, body=invalid), 422, "Invalid")
    assert "bad key!" in body["message"]
    assert absent(cluster, "/api/v1/namespaces/%s/configmaps/broken" % namespace)


def test_put_refuses_bodies_that_name_something_else(cluster, gateway, namespace, admin_token):
    kube.apps(cluster, namespace, "deployments", "web", {"app": "web"})
    path = DEPLOYMENTS % namespace + "web"
    before = generation(cluster, path)
    obj = gateway.get(raw(namespace, "web"), token=admin_token).json()
    obj["spec"]["replicas"] = 5
    url = raw(namespace, "web")
    bad(gateway.request("PUT", url, token=admin_token, body=dict(obj, kind="StatefulSet")),
        "StatefulSet")
    bad(gateway.request("PUT", url, token=admin_token,
                        body=dict(obj, metadata=dict(obj["metadata"], name="other"))), "other")
    bad(gateway.request("PUT", url, token=admin_token,
                        body=dict(obj, metadata=dict(obj["metadata"], namespace="default"))),
        "namespace")
    bad(gateway.request("PUT", url, token=admin_token, raw_body=b"{not json",
                        headers={"Content-Type": "application/json"}), "not valid JSON")
    bad(gateway.request("PUT", url, token=admin_token, body=[1, 2]), "whole object")
    bad(gateway.request("PUT", url, token=admin_token, body=dict(obj, apiVersion="apps/v0")),
        "does not serve Deployment in apps/v0")
    bad(gateway.request("PUT", raw(namespace, "web", "nosuchkind"), token=admin_token,
                        body=obj), "unknown kind")
    huge = json.dumps(dict(obj, data="x" * (5 * 1024 * 1024))).encode()
    assert_error(gateway.request("PUT", url, token=admin_token, raw_body=huge,
                                 headers={"Content-Type": "application/json"}), 413,
                 "RequestEntityTooLarge")
    assert generation(cluster, path) == before
    assert read(cluster, path)["spec"]["replicas"] == 1


def test_delete_with_propagation_and_delete_now(cluster, gateway, namespace, admin_token):
    kube.apps(cluster, namespace, "deployments", "web", {"app": "web"})
    path = DEPLOYMENTS % namespace + "web"

    def replica_sets():
        status, body = cluster.request("GET", "/apis/apps/v1/namespaces/%s/replicasets"
                                       % namespace)
        return body["items"]
    cluster.wait_for(replica_sets, timeout=30, what="the deployment's replica set")
    url = raw(namespace, "web")
    bad(gateway.request("DELETE", url, token=admin_token, params={"propagation": "Sideways"}),
        "propagation")
    bad(gateway.request("DELETE", url, token=admin_token, params={"deleteNow": "maybe"}),
        "deleteNow")
    forbidden(gateway.request("DELETE", url, token=cluster.norights_token), "delete",
              "deployments")
    unauthorized(gateway.request("DELETE", url))
    assert not absent(cluster, path)
    reply = gateway.request("DELETE", url, token=admin_token,
                            params={"propagation": "Orphan", "deleteNow": "false"})
    assert reply.status == 204 and reply.data == b"", reply
    cluster.wait_for(lambda: absent(cluster, path), timeout=30, what="the deployment gone")
    # Orphaned: the replica set stays, without its owner.
    [rs] = replica_sets()
    assert not rs["metadata"].get("ownerReferences")
    assert_error(gateway.request("DELETE", url, token=admin_token), 404, "NotFound")

    # deleteNow: a one-second grace period instead of the pod's own 30 seconds. The pod is
    # bound to a node no kubelet serves, so it stays terminating and shows the period.
    for name in ("slow", "now"):
        kube.create(cluster, "/api/v1/namespaces/%s/pods" % namespace, {
            "metadata": {"name": name}, "spec": {
                "nodeName": "no-kubelet-" + namespace, "terminationGracePeriodSeconds": 30,
                "containers": [kube.container()]}})
    for name, now in (("slow", "false"), ("now", "true")):
        reply = gateway.request("DELETE", raw(namespace, name, "pod"), token=admin_token,
                                params={"propagation": "Background", "deleteNow": now})
        assert reply.status == 204, reply
    slow = read(cluster, "/api/v1/namespaces/%s/pods/slow" % namespace)["metadata"]
    now = read(cluster, "/api/v1/namespaces/%s/pods/now" % namespace)["metadata"]
    assert slow["deletionGracePeriodSeconds"] == 30 and now["deletionGracePeriodSeconds"] == 1
    for name in ("slow", "now"):  # gone for good, so the namespace can go
        cluster.request("DELETE", "/api/v1/namespaces/%s/pods/%s" % (namespace, name),
                        {"gracePeriodSeconds": 0})


def test_custom_objects_by_plural_and_group(cluster, gateway, namespace, admin_token, widgets):
    group, _ = widgets
    url = raw(namespace, "w-1", "widgets." + group)
    # Discovery is refreshed at most every 10 s: the new group appears within that.
    reply = cluster.wait_for(lambda: (lambda r: r.status == 200 and r)(
        gateway.get(url, token=admin_token)), timeout=30, what="the new CRD served")
    obj = reply.json()
    assert obj["kind"] == "Widget" and obj["spec"] == {"replicas": 1}
    obj["spec"]["colour"] = "blue"
    assert gateway.request("PUT", url, token=admin_token, body=obj).status == 204
    path = "/apis/%s/v1/namespaces/%s/widgets/w-1" % (group, namespace)
    assert read(cluster, path)["spec"] == {"replicas": 1, "colour": "blue"}
    assert gateway.request("DELETE", url, token=admin_token).status == 204
    cluster.wait_for(lambda: deleted_in_foreground(cluster, path), timeout=30,
                     what="the widget gone or going (the gateway's default propagation)")
