"""Configuration and storage: configmap, secret, persistentvolume, persistentvolumeclaim,
storageclass (and its persistentvolume sublist)."""

import base64
import json
import secrets

from tests.resources import kube
from tests.resources.checks import confined, forbidden, get, missing

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ROOT_CA = "kube-root-ca.crt"


def b64(text):
    return base64.b64encode(text.encode()).decode()


def test_config_maps(cluster, gateway, namespace, other_namespace, admin_token):
    ns = namespace
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns, {
        "metadata": {"name": "settings", "labels": {"tier": "web"}},
        "data": {"mode": "fast", "level": "3"}})
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns, {"metadata": {"name": "empty"}})
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % other_namespace,
                {"metadata": {"name": "elsewhere"}})

    for where in (ns, other_namespace):  # published into every namespace by a controller
        kube.wait_object(cluster, "/api/v1/namespaces/%s/configmaps/%s" % (where, ROOT_CA),
                         lambda obj: True, what="the root CA config map")

    body = get(gateway, "/api/v1/configmap/" + ns, admin_token, sortBy="d,name")
    assert body["listMeta"] == {"totalItems": 3} and body["errors"] == []
    assert kube.names(body, "items") == ["settings", ROOT_CA, "empty"]
    item = body["items"][0]
    assert set(item) == {"objectMeta", "typeMeta"} and item["typeMeta"] == {"kind": "configmap"}
    assert item["objectMeta"]["labels"] == {"tier": "web"}
    assert item["objectMeta"]["namespace"] == ns
    both = get(gateway, "/api/v1/configmap/%s,%s" % (ns, other_namespace), admin_token,
               filterBy="name,e", sortBy="a,namespace,a,name")
    assert [(i["objectMeta"]["namespace"], i["objectMeta"]["name"]) for i in both["items"]] == \
        sorted([(ns, "empty"), (ns, "settings"), (other_namespace, "elsewhere"),
                (ns, ROOT_CA), (other_namespace, ROOT_CA)])

    d = get(gateway, "/api/v1/configmap/%s/settings" % ns, admin_token)
    assert d["data"] == {"mode": "fast", "level": "3"}
    assert d["typeMeta"] == {"kind": "configmap"} and d["objectMeta"]["name"] == "settings"
    assert "data" not in get(gateway, "/api/v1/configmap/%s/empty" % ns, admin_token)


def test_secrets(cluster, gateway, namespace, admin_token):
    ns = namespace
    applied = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "applied"},
               "stringData": {"token": "hunter2"}}
    kube.create(cluster, "/api/v1/namespaces/%s/secrets" % ns, {
        "metadata": {"name": "creds", "annotations": {"owner": "team"}},
        "type": "Opaque", "stringData": {"password": "s3cret", "user": "admin"}})
    kube.create(cluster, "/api/v1/namespaces/%s/secrets" % ns, {
        "metadata": {"name": "applied", "annotations": {LAST_APPLIED: json.dumps(applied)}},
        "stringData": {"token": "hunter2"}})

    cluster.service_account_token(ns, "default")  # its token secret is listed too
    [token] = [s for s in cluster.request("GET", "/api/v1/namespaces/%s/secrets" % ns)[1][
        "items"] if s["type"] == "kubernetes.io/service-account-token"]

    reply = gateway.get("/api/v1/secret/" + ns, token=admin_token, params={"sortBy": "a,name"})
    assert reply.status == 200, reply
    body = reply.json()
    assert kube.names(body, "secrets") == ["applied", "creds", token["metadata"]["name"]]
    assert body["listMeta"] == {"totalItems": 3} and body["errors"] == []
    applied_item, creds, token_item = body["secrets"]
    assert token_item["type"] == "kubernetes.io/service-account-token"
    assert creds == {"objectMeta": creds["objectMeta"], "typeMeta": {"kind": "secret"},
                     "type": "Opaque"}
    assert creds["objectMeta"]["annotations"] == {"owner": "team"}
    assert applied_item["type"] == "Opaque" and "annotations" not in applied_item["objectMeta"]
    # No value, plain or base64, appears anywhere in the list.
    raw = reply.data.decode()
    values = ["s3cret", "hunter2", b64("s3cret"), b64("hunter2")] + list(token["data"].values())
    for value in values + ["stringData", '"data"']:
        assert value not in raw, value

    d = get(gateway, "/api/v1/secret/%s/creds" % ns, admin_token)
    assert d["typeMeta"] == {"kind": "secret"} and d["type"] == "Opaque"
    assert d["data"] == {"password": b64("s3cret"), "user": b64("admin")}


def wait_bound(cluster, ns, claim):
    return kube.wait_object(cluster, "/api/v1/namespaces/%s/persistentvolumeclaims/%s" % (
        ns, claim), lambda c: c.get("status", {}).get("phase") == "Bound",
        what="claim %s bound" % claim)


def test_volumes_claims_and_classes(cluster, gateway, namespace, admin_token, cluster_objects):
    ns = namespace
    tag = secrets.token_hex(4)
    fast, slow = "t-fast-" + tag, "t-slow-" + tag
    for name, params in ((fast, {"type": "ssd", "zone": "a"}), (slow, None)):
        body = {"metadata": {"name": name}, "provisioner": "example.com/none"}
        if params:
            body["parameters"] = params
        kube.create(cluster, "/apis/storage.k8s.io/v1/storageclasses", body)
        cluster_objects.append("/apis/storage.k8s.io/v1/storageclasses/" + name)
    nfs = {"server": "nfs.example.com", "path": "/exports/a"}
    for name, cls, size in (("t-pv-a-" + tag, fast, "1Gi"), ("t-pv-b-" + tag, slow, "2Gi"),
                            ("t-pv-c-" + tag, fast, "5Gi")):
        kube.create(cluster, "/api/v1/persistentvolumes", {
            "metadata": {"name": name, "labels": {"test": tag}},
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteMany"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": cls,
                     "mountOptions": ["hard", "nfsvers=4.1"], "nfs": nfs}})
        cluster_objects.append("/api/v1/persistentvolumes/" + name)
    kube.create(cluster, "/api/v1/namespaces/%s/persistentvolumeclaims" % ns, {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": fast,
                 "resources": {"requests": {"storage": "3Gi"}}}})
    kube.create(cluster, "/api/v1/namespaces/%s/persistentvolumeclaims" % ns, {
        "metadata": {"name": "waiting"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "t-none-" + tag,
                 "resources": {"requests": {"storage": "1Gi"}}}})
    wait_bound(cluster, ns, "data")
    pv_c = "t-pv-c-" + tag  # the only fast volume big enough
    kube.wait_object(cluster, "/api/v1/persistentvolumes/" + pv_c,
                     lambda v: v["status"].get("phase") == "Bound", what="volume bound")

    # Persistent volumes.
    body = get(gateway, "/api/v1/persistentvolume", admin_token, filterBy="name," + tag,
               sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 3} and body["errors"] == []
    a, b, c = body["items"]
    assert c["typeMeta"] == {"kind": "persistentvolume"}
    assert c["objectMeta"]["labels"] == {"test": tag} and "namespace" not in c["objectMeta"]
    assert (c["capacity"], c["accessModes"], c["reclaimPolicy"], c["storageClass"]) == (
        {"storage": "5Gi"}, ["ReadWriteMany"], "Retain", fast)
    assert c["mountOptions"] == ["hard", "nfsvers=4.1"]
    assert (c["status"], c["claim"], c["reason"]) == ("Bound", ns + "/data", "")
    assert (a["status"], a["claim"], b["storageClass"]) == ("Available", "", slow)
    bound = get(gateway, "/api/v1/persistentvolume", admin_token,
                filterBy="name,%s,status,Bound" % tag)
    assert kube.names(bound, "items") == [pv_c]

    d = get(gateway, "/api/v1/persistentvolume/" + pv_c, admin_token)
    assert d["persistentVolumeSource"] == {"nfs": nfs}
    assert d["message"] == "" and d["claim"] == ns + "/data" and d["status"] == "Bound"

    # Claims.
    claims = get(gateway, "/api/v1/persistentvolumeclaim/" + ns, admin_token, sortBy="a,name")
    assert claims["listMeta"] == {"totalItems": 2} and claims["errors"] == []
    data, waiting = claims["items"]
    assert data["typeMeta"] == {"kind": "persistentvolumeclaim"}
    assert (data["status"], data["volume"], data["capacity"], data["accessModes"],
            data["storageClass"]) == ("Bound", pv_c, {"storage": "5Gi"}, ["ReadWriteMany"],
                                      fast)
    assert (waiting["status"], waiting["volume"], waiting["capacity"]) == ("Pending", "", {})
    detail = get(gateway, "/api/v1/persistentvolumeclaim/%s/data" % ns, admin_token)
    assert detail == data

    # Storage classes and their volumes.
    classes = get(gateway, "/api/v1/storageclass", admin_token, filterBy="name," + tag,
                  sortBy="a,name")
    assert kube.names(classes, "items") == [fast, slow] and classes["errors"] == []
    item = classes["items"][0]
    assert item["typeMeta"] == {"kind": "storageclass"}
    assert (item["provisioner"], item["parameters"]) == ("example.com/none",
                                                         {"type": "ssd", "zone": "a"})
    assert classes["items"][1]["parameters"] == {}
    assert get(gateway, "/api/v1/storageclass/" + fast, admin_token) == item

    volumes = get(gateway, "/api/v1/storageclass/%s/persistentvolume" % fast, admin_token,
                  sortBy="d,name")
    assert kube.names(volumes, "items") == [pv_c, "t-pv-a-" + tag]
    assert volumes["listMeta"] == {"totalItems": 2} and volumes["errors"] == []
    assert volumes["items"][0] == c
    assert kube.names(get(gateway, "/api/v1/storageclass/%s/persistentvolume" % slow,
                          admin_token, filterBy="status,Avail"), "items") == ["t-pv-b-" + tag]


def test_config_storage_rights(cluster, gateway, namespace, editor_token, norights_token):
    ns = namespace
    for kind, resource in (("configmap", "configmaps"), ("secret", "secrets"),
                           ("persistentvolumeclaim", "persistentvolumeclaims")):
        forbidden(gateway, "/api/v1/%s/%s" % (kind, ns), norights_token, "list", resource)
        forbidden(gateway, "/api/v1/%s/%s/x" % (kind, ns), norights_token, "get", resource)
        confined(gateway, kind, editor_token, ns)
        assert gateway.get("/api/v1/%s/%s" % (kind, ns)).status == 401
    for kind, resource in (("persistentvolume", "persistentvolumes"),
                           ("storageclass", "storageclasses")):
        forbidden(gateway, "/api/v1/" + kind, norights_token, "list", resource)
        forbidden(gateway, "/api/v1/%s/x" % kind, norights_token, "get", resource)
        reply = gateway.get("/api/v1/" + kind, token=editor_token)
        assert reply.status == 403 and 'User "editor" cannot list' in reply.json()["message"]
    forbidden(gateway, "/api/v1/storageclass/x/persistentvolume", norights_token, "get",
              "storageclasses")


def test_storage_class_volumes_need_volume_rights(cluster, gateway, namespace,
                                                  cluster_objects):
    """The sublist's content is the volumes: without the right to list them it is a 403."""
    name = "t-only-" + secrets.token_hex(4)
    kube.create(cluster, "/apis/storage.k8s.io/v1/storageclasses",
                {"metadata": {"name": name}, "provisioner": "example.com/none"})
    cluster_objects.append("/apis/storage.k8s.io/v1/storageclasses/" + name)
    rules = [{"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"],
              "verbs": ["get", "list"]}]
    kube.create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                {"metadata": {"name": name}, "rules": rules})
    cluster_objects.append("/apis/rbac.authorization.k8s.io/v1/clusterroles/" + name)
    kube.create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % namespace,
                {"metadata": {"name": "sc-reader"}})
    kube.create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "sc-reader", "namespace": namespace}]})
    cluster_objects.append("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + name)
    token = cluster.service_account_token(namespace, "sc-reader")
    cluster.wait_for(lambda: gateway.get("/api/v1/storageclass/" + name, token=token).status
                     == 200, timeout=30, what="the storage class reader's binding")
    reply = gateway.get("/api/v1/storageclass/%s/persistentvolume" % name, token=token)
    assert reply.status == 403, reply
    assert 'cannot list resource "persistentvolumes"' in reply.json()["message"]


def test_config_storage_missing_is_404(gateway, namespace, admin_token):
    ns = namespace
    missing(gateway, "/api/v1/configmap/%s/nope" % ns, admin_token,
            'configmaps "nope" not found')
    missing(gateway, "/api/v1/secret/%s/nope" % ns, admin_token, 'secrets "nope" not found')
    missing(gateway, "/api/v1/persistentvolumeclaim/%s/nope" % ns, admin_token,
            'persistentvolumeclaims "nope" not found')
    absent = "nope-" + secrets.token_hex(4)
    missing(gateway, "/api/v1/persistentvolume/" + absent, admin_token,
            'persistentvolumes "%s" not found' % absent)
    for suffix in ("", "/persistentvolume"):
        missing(gateway, "/api/v1/storageclass/%s%s" % (absent, suffix), admin_token,
                'storageclasses.storage.k8s.io "%s" not found' % absent)
