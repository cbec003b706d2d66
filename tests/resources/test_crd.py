"""Custom resources: /crd, /crd/{crd}, /crd/{ns}/{crd}/object, /crd/{ns}/{crd}/{object},
/crd/{ns}/{crd}/{object}/event."""

import secrets

import pytest

from tests.resources import kube
from tests.resources.checks import forbidden, get, missing

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
OPEN_SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}


def version(name, served=True, storage=False, subresources=None):
    out = {"name": name, "served": served, "storage": storage, "schema": OPEN_SCHEMA}
    if subresources:
        out["subresources"] = subresources
    return out


def define(cluster, cluster_objects, group, plural, kind, scope, versions, **names):
    name = "%s.%s" % (plural, group)
    kube.create(cluster, CRDS, {"metadata": {"name": name}, "spec": {
        "group": group, "scope": scope, "versions": versions,
        "names": dict({"plural": plural, "kind": kind}, **names)}})
    cluster_objects.append("%s/%s" % (CRDS, name))
    return name


def established(cluster, name):
    def ready():
        status, crd = cluster.request("GET", "%s/%s" % (CRDS, name))
        return status == 200 and any(c["type"] == "Established" and c["status"] == "True"
                                     for c in (crd.get("status") or {}).get("conditions") or ())
    cluster.wait_for(ready, timeout=30, what="CRD %s established" % name)


def create_object(cluster, path, body):
    """Creates a custom object, retrying while the API server starts serving the new CRD."""
    result = {}

    def created():
        result["status"], result["body"] = cluster.request("POST", path, body)
        return result["status"] == 201
    cluster.wait_for(created, timeout=30, what="creating %s" % path)
    return result["body"]


@pytest.fixture
def defined(cluster, cluster_objects, namespace, other_namespace):
    """Three CRDs of a fresh group and objects of the two that serve a version."""
    group = "t%s.example.com" % secrets.token_hex(4)
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    widgets = define(cluster, cluster_objects, group, "widgets", "Widget", "Namespaced",
                     [version("v1alpha1", served=False),
                      version("v1", storage=True, subresources={"scale": scale, "status": {}})],
                     singular="widget", shortNames=["wd"], listKind="WidgetList",
                     categories=["all"])
    gadgets = define(cluster, cluster_objects, group, "gadgets", "Gadget", "Cluster",
                     [version("v2", storage=True)])
    hidden = define(cluster, cluster_objects, group, "hiddens", "Hidden", "Namespaced",
                    [version("v1", served=False, storage=True)])
    for name in (widgets, gadgets):
        established(cluster, name)
    for ns, name in ((namespace, "w-1"), (namespace, "w-2"), (other_namespace, "w-3")):
        create_object(cluster, "/apis/%s/v1/namespaces/%s/widgets" % (group, ns), {
            "apiVersion": group + "/v1", "kind": "Widget",
            "metadata": {"name": name, "labels": {"n": name}}, "spec": {"replicas": 1}})
    create_object(cluster, "/apis/%s/v2/gadgets" % group, {
        "apiVersion": group + "/v2", "kind": "Gadget", "metadata": {"name": "g-1"}})
    return {"group": group, "widgets": widgets, "gadgets": gadgets, "hidden": hidden}


def test_crd_list(gateway, admin_token, defined):
    group = defined["group"]
    body = get(gateway, "/api/v1/crd", admin_token, filterBy="name," + group, sortBy="a,name")
    # The CRD that serves no version is left out, and not counted.
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    assert kube.names(body, "items") == [defined["gadgets"], defined["widgets"]]
    gadgets, widgets = body["items"]
    assert widgets["typeMeta"] == {"kind": "customresourcedefinition"}
    assert "namespace" not in widgets["objectMeta"]
    assert (widgets["version"], widgets["group"], widgets["scope"], widgets["established"]) == (
        "v1", group, "Namespaced", "True")
    assert widgets["names"] == {"plural": "widgets", "singular": "widget", "shortNames": ["wd"],
                                "kind": "Widget", "listKind": "WidgetList",
                                "categories": ["all"]}
    assert (gadgets["version"], gadgets["scope"]) == ("v2", "Cluster")
    # The API server fills in the singular and listKind names it accepted.
    assert gadgets["names"] == {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                                "listKind": "GadgetList"}
    page = get(gateway, "/api/v1/crd", admin_token, filterBy="name," + group, sortBy="d,name",
               itemsPerPage="1", page="2")
    assert page["listMeta"] == {"totalItems": 2}
    assert kube.names(page, "items") == [defined["gadgets"]]
    # The CRD list has no namespace property: filtering on it keeps nothing.
    assert get(gateway, "/api/v1/crd", admin_token,
               filterBy="namespace,")["listMeta"] == {"totalItems": 0}


def test_crd_detail(gateway, admin_token, defined, namespace, other_namespace):
    group = defined["group"]
    d = get(gateway, "/api/v1/crd/" + defined["widgets"], admin_token)
    assert d["objectMeta"]["name"] == defined["widgets"] and d["version"] == "v1"
    assert d["typeMeta"] == {"kind": "customresourcedefinition"}
    assert d["versions"] == [{"name": "v1alpha1", "served": False, "storage": False},
                             {"name": "v1", "served": True, "storage": True}]
    assert d["subresources"] == ["Scale", "Status"] and d["errors"] == []
    assert {(c["type"], c["status"]) for c in d["conditions"]} >= {("Established", "True"),
                                                                  ("NamesAccepted", "True")}
    objects = d["objects"]
    assert objects["typeMeta"] == {"kind": "WidgetList", "apiVersion": group + "/v1"}
    assert objects["listMeta"] == {"totalItems": 3} and objects["errors"] == []
    assert sorted((o["objectMeta"]["namespace"], o["objectMeta"]["name"])
                  for o in objects["items"]) == sorted(
        [(namespace, "w-1"), (namespace, "w-2"), (other_namespace, "w-3")])
    assert objects["items"][0]["typeMeta"] == {"kind": defined["widgets"], "scalable": True}

    g = get(gateway, "/api/v1/crd/" + defined["gadgets"], admin_token)
    assert g["subresources"] == [] and g["versions"] == [
        {"name": "v2", "served": True, "storage": True}]
    assert [o["objectMeta"]["name"] for o in g["objects"]["items"]] == ["g-1"]
    assert g["objects"]["items"][0]["typeMeta"] == {"kind": defined["gadgets"]}

    h = get(gateway, "/api/v1/crd/" + defined["hidden"], admin_token)
    assert h["version"] == "" and h["objects"]["listMeta"] == {"totalItems": 0}


def test_crd_objects(gateway, admin_token, defined, namespace, other_namespace):
    group, widgets, gadgets = defined["group"], defined["widgets"], defined["gadgets"]

    def listed(segment, crd, **params):
        body = get(gateway, "/api/v1/crd/%s/%s/object" % (segment, crd), admin_token,
                   sortBy="a,name", **params)
        assert body["errors"] == []
        return body

    mine = listed(namespace, widgets)
    assert mine["typeMeta"] == {"kind": "WidgetList", "apiVersion": group + "/v1"}
    assert mine["listMeta"] == {"totalItems": 2} and kube.names(mine, "items") == ["w-1", "w-2"]
    item = mine["items"][0]
    assert set(item) == {"typeMeta", "objectMeta"}
    assert item["typeMeta"] == {"kind": widgets, "scalable": True}
    assert item["objectMeta"]["labels"] == {"n": "w-1"}
    assert item["objectMeta"]["namespace"] == namespace and item["objectMeta"]["uid"]
    both = listed("%s,%s" % (namespace, other_namespace), widgets)
    assert kube.names(both, "items") == ["w-1", "w-2", "w-3"]
    assert kube.names(listed("%20", widgets), "items") == ["w-1", "w-2", "w-3"]
    assert kube.names(listed(namespace, widgets, filterBy="name,2"), "items") == ["w-2"]
    assert kube.names(listed(other_namespace, widgets, filterBy="namespace," + other_namespace),
                      "items") == ["w-3"]
    # Cluster-scoped objects ignore the namespace segment.
    cluster_wide = listed(namespace, gadgets)
    assert kube.names(cluster_wide, "items") == ["g-1"]
    assert cluster_wide["typeMeta"] == {"kind": "GadgetList", "apiVersion": group + "/v2"}

    d = get(gateway, "/api/v1/crd/%s/%s/w-1" % (namespace, widgets), admin_token)
    assert d == {"typeMeta": {"kind": widgets, "scalable": True},
                 "objectMeta": item["objectMeta"], "errors": []}
    g = get(gateway, "/api/v1/crd/anywhere/%s/g-1" % gadgets, admin_token)
    assert g["objectMeta"]["name"] == "g-1" and "namespace" not in g["objectMeta"]


def test_crd_object_events(cluster, gateway, admin_token, defined, namespace):
    widgets, group = defined["widgets"], defined["group"]
    status, w1 = cluster.request("GET", "/apis/%s/v1/namespaces/%s/widgets/w-1" % (
        group, namespace))
    assert status == 200
    kube.event(cluster, namespace, "w.1", kube.involved(w1, "Widget"), "Reconciled", "done",
               type_="Normal", first="2024-05-01T10:00:00Z")
    kube.event(cluster, namespace, "w.2", kube.involved(w1, "Widget"), "ReconcileFailed",
               "oops", first="2024-05-03T10:00:00Z")
    kube.event(cluster, namespace, "p.1", {"kind": "Pod", "name": "w-1", "namespace": namespace},
               "Pulled", "a pod called w-1")

    events = get(gateway, "/api/v1/crd/%s/%s/w-1/event" % (namespace, widgets), admin_token,
                 sortBy="d,lastSeen")
    assert events["listMeta"] == {"totalItems": 2} and events["errors"] == []
    assert [(e["reason"], e["type"]) for e in events["events"]] == [
        ("ReconcileFailed", "Warning"), ("Reconciled", "Normal")]
    assert events["events"][0]["objectKind"] == "Widget"
    assert get(gateway, "/api/v1/crd/%s/%s/w-2/event" % (namespace, widgets),
               admin_token)["events"] == []


def test_crd_missing_is_404(gateway, admin_token, defined, namespace):
    absent = "nopes.t%s.example.com" % secrets.token_hex(4)
    what = 'customresourcedefinitions.apiextensions.k8s.io "%s" not found' % absent
    for path in ("/api/v1/crd/" + absent, "/api/v1/crd/%s/%s/object" % (namespace, absent),
                 "/api/v1/crd/%s/%s/x" % (namespace, absent),
                 "/api/v1/crd/%s/%s/x/event" % (namespace, absent)):
        missing(gateway, path, admin_token, what)
    widgets = defined["widgets"]
    for suffix in ("", "/event"):
        missing(gateway, "/api/v1/crd/%s/%s/nope%s" % (namespace, widgets, suffix),
                admin_token, '%s "nope" not found' % widgets)
    missing(gateway, "/api/v1/crd/%s/%s/object" % (namespace, defined["hidden"]), admin_token,
            "serves no version")


def test_crd_rights(cluster, gateway, admin_token, norights_token, editor_token, defined,
                    namespace, other_namespace, cluster_objects):
    widgets, group = defined["widgets"], defined["group"]
    forbidden(gateway, "/api/v1/crd", norights_token, "list", "customresourcedefinitions")
    for path in ("/api/v1/crd/" + widgets, "/api/v1/crd/%s/%s/object" % (namespace, widgets),
                 "/api/v1/crd/%s/%s/w-1" % (namespace, widgets),
                 "/api/v1/crd/%s/%s/w-1/event" % (namespace, widgets)):
        forbidden(gateway, path, norights_token, "get", "customresourcedefinitions")
    assert gateway.get("/api/v1/crd/" + widgets).status == 401
    assert gateway.get("/api/v1/crd", token=editor_token).status == 403

    # A reader of the CRD (cluster-wide) and of its objects in one namespace only.
    reader = "t-crd-reader-" + secrets.token_hex(4)
    kube.create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": {"name": reader}, "rules": [{
            "apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"],
            "verbs": ["get"]}]})
    cluster_objects.append("/apis/rbac.authorization.k8s.io/v1/clusterroles/" + reader)
    token = kube.grant(cluster, namespace, "widget-reader", [{
        "apiGroups": [group], "resources": ["widgets"], "verbs": ["get", "list"]}])
    kube.create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": reader},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": reader},
        "subjects": [{"kind": "ServiceAccount", "name": "widget-reader",
                      "namespace": namespace}]})
    cluster_objects.append("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + reader)
    cluster.wait_for(lambda: gateway.get("/api/v1/crd/%s/%s/object" % (namespace, widgets),
                                         token=token).status == 200,
                     timeout=30, what="the CRD reader's binding")

    for segment in ("%20", "%s,%s" % (namespace, other_namespace)):
        reply = gateway.get("/api/v1/crd/%s/%s/object" % (segment, widgets), token=token)
        assert reply.status == 403, (segment, reply)
        assert 'cannot list resource "widgets"' in reply.json()["message"]
    mine = get(gateway, "/api/v1/crd/%s/%s/object" % (namespace, widgets), token,
               sortBy="a,name")
    assert kube.names(mine, "items") == ["w-1", "w-2"]
    assert mine["errors"] == []

    # The detail lists objects of every namespace: forbidden, so it answers with the 403 in
    # errors and no objects.
    d = get(gateway, "/api/v1/crd/" + widgets, token)
    assert d["objects"]["items"] == [] and d["objects"]["listMeta"] == {"totalItems": 0}
    [error] = d["errors"]
    assert error["ErrStatus"]["code"] == 403
    assert 'cannot list resource "widgets"' in error["ErrStatus"]["message"]
