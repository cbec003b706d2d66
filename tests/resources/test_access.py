"""Access control and policy: role, rolebinding, clusterrole, clusterrolebinding,
serviceaccount (+ secret, imagepullsecret), poddisruptionbudget, horizontalpodautoscaler."""

import secrets

from tests.resources import kube
from tests.resources.checks import confined, forbidden, get, missing, usable_only

RBAC = "/apis/rbac.authorization.k8s.io/v1"
READ_PODS = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]


def role_ref(kind, name):
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}


def test_roles_and_bindings(cluster, gateway, namespace, other_namespace, admin_token):
    ns = namespace
    kube.create(cluster, "%s/namespaces/%s/roles" % (RBAC, ns),
                {"metadata": {"name": "reader", "labels": {"team": "a"}}, "rules": READ_PODS})
    kube.create(cluster, "%s/namespaces/%s/roles" % (RBAC, ns),
                {"metadata": {"name": "empty"}, "rules": []})
    kube.create(cluster, "%s/namespaces/%s/roles" % (RBAC, other_namespace),
                {"metadata": {"name": "elsewhere"}, "rules": []})
    subjects = [{"kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io"},
                {"kind": "ServiceAccount", "name": "default", "namespace": ns}]
    kube.create(cluster, "%s/namespaces/%s/rolebindings" % (RBAC, ns), {
        "metadata": {"name": "readers"}, "roleRef": role_ref("Role", "reader"),
        "subjects": subjects})
    kube.create(cluster, "%s/namespaces/%s/rolebindings" % (RBAC, ns), {
        "metadata": {"name": "nobody-yet"}, "roleRef": role_ref("ClusterRole", "view")})

    roles = get(gateway, "/api/v1/role/" + ns, admin_token, sortBy="a,name")
    assert roles["listMeta"] == {"totalItems": 2} and roles["errors"] == []
    assert kube.names(roles, "items") == ["empty", "reader"]
    reader = roles["items"][1]
    assert set(reader) == {"objectMeta", "typeMeta"} and reader["typeMeta"] == {"kind": "role"}
    assert reader["objectMeta"]["labels"] == {"team": "a"}
    assert reader["objectMeta"]["namespace"] == ns
    both = get(gateway, "/api/v1/role/%s,%s" % (ns, other_namespace), admin_token,
               sortBy="a,name", filterBy="name,e")
    assert kube.names(both, "items") == ["elsewhere", "empty", "reader"]

    d = get(gateway, "/api/v1/role/%s/reader" % ns, admin_token)
    assert d["rules"] == READ_PODS and d["typeMeta"] == {"kind": "role"} and d["errors"] == []
    assert get(gateway, "/api/v1/role/%s/empty" % ns, admin_token)["rules"] == []

    bindings = get(gateway, "/api/v1/rolebinding/" + ns, admin_token, sortBy="d,name")
    assert kube.names(bindings, "items") == ["readers", "nobody-yet"]
    assert bindings["items"][0]["typeMeta"] == {"kind": "rolebinding"}
    d = get(gateway, "/api/v1/rolebinding/%s/readers" % ns, admin_token)
    assert d["roleRef"] == role_ref("Role", "reader") and d["subjects"] == subjects
    assert d["typeMeta"] == {"kind": "rolebinding"} and d["errors"] == []
    bare = get(gateway, "/api/v1/rolebinding/%s/nobody-yet" % ns, admin_token)
    assert "subjects" not in bare and bare["roleRef"] == role_ref("ClusterRole", "view")


def test_cluster_roles_and_bindings(cluster, gateway, admin_token, cluster_objects):
    name = "t-cr-" + secrets.token_hex(4)
    rules = [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]},
             {"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]
    kube.create(cluster, RBAC + "/clusterroles", {"metadata": {"name": name}, "rules": rules})
    cluster_objects.append("%s/clusterroles/%s" % (RBAC, name))
    subjects = [{"kind": "Group", "name": "auditors", "apiGroup": "rbac.authorization.k8s.io"}]
    kube.create(cluster, RBAC + "/clusterrolebindings", {
        "metadata": {"name": name}, "roleRef": role_ref("ClusterRole", name),
        "subjects": subjects})
    cluster_objects.append("%s/clusterrolebindings/%s" % (RBAC, name))

    roles = get(gateway, "/api/v1/clusterrole", admin_token, filterBy="name," + name)
    assert roles["listMeta"] == {"totalItems": 1} and roles["errors"] == []
    [item] = roles["items"]
    assert item["typeMeta"] == {"kind": "clusterrole"} and "namespace" not in item["objectMeta"]
    everything = get(gateway, "/api/v1/clusterrole", admin_token, itemsPerPage="5", page="2",
                     sortBy="a,name")
    assert everything["listMeta"]["totalItems"] > 40 and len(everything["items"]) == 5
    d = get(gateway, "/api/v1/clusterrole/" + name, admin_token)
    assert d["rules"] == rules and d["errors"] == [] and d["objectMeta"]["name"] == name
    admin = get(gateway, "/api/v1/clusterrole/cluster-admin", admin_token)
    assert admin["rules"][0]["verbs"] == ["*"]

    bindings = get(gateway, "/api/v1/clusterrolebinding", admin_token, filterBy="name," + name)
    assert kube.names(bindings, "items") == [name]
    assert bindings["items"][0]["typeMeta"] == {"kind": "clusterrolebinding"}
    d = get(gateway, "/api/v1/clusterrolebinding/" + name, admin_token)
    assert d["roleRef"] == role_ref("ClusterRole", name) and d["subjects"] == subjects
    assert d["typeMeta"] == {"kind": "clusterrolebinding"} and d["errors"] == []


def test_service_accounts(cluster, gateway, namespace, admin_token):
    ns = namespace
    secrets_path = "/api/v1/namespaces/%s/secrets" % ns
    kube.create(cluster, secrets_path, {
        "metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": '{"auths": {"r.example.com": {"auth": "eDp5"}}}'}})
    kube.create(cluster, secrets_path, {"metadata": {"name": "extra"},
                                        "stringData": {"key": "value-1"}})
    kube.create(cluster, secrets_path, {"metadata": {"name": "unrelated"},
                                        "stringData": {"key": "value-2"}})
    kube.create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % ns, {
        "metadata": {"name": "builder"}, "secrets": [{"name": "extra"}],
        "imagePullSecrets": [{"name": "regcred"}, {"name": "missing"}]})
    token = cluster.service_account_token(ns, "builder")
    account = kube.wait_object(cluster, "/api/v1/namespaces/%s/serviceaccounts/builder" % ns,
                               lambda sa: len(sa.get("secrets") or ()) == 2,
                               what="the builder's token secret")
    [token_secret] = [s["name"] for s in account["secrets"] if s["name"] != "extra"]

    accounts = get(gateway, "/api/v1/serviceaccount/" + ns, admin_token, sortBy="a,name")
    assert kube.names(accounts, "items") == ["builder", "default"]
    assert accounts["listMeta"] == {"totalItems": 2} and accounts["errors"] == []
    assert accounts["items"][0]["typeMeta"] == {"kind": "serviceaccount"}
    assert set(accounts["items"][0]) == {"objectMeta", "typeMeta"}
    d = get(gateway, "/api/v1/serviceaccount/%s/builder" % ns, admin_token)
    assert d["typeMeta"] == {"kind": "serviceaccount"} and d["errors"] == []
    assert d["objectMeta"]["name"] == "builder" and d["objectMeta"]["namespace"] == ns

    reply = gateway.get("/api/v1/serviceaccount/%s/builder/secret" % ns, token=admin_token,
                        params={"sortBy": "a,name"})
    assert reply.status == 200, reply
    owned = reply.json()
    assert sorted(kube.names(owned, "secrets")) == sorted(["extra", token_secret])
    assert owned["listMeta"] == {"totalItems": 2} and owned["errors"] == []
    types = {s["objectMeta"]["name"]: s["type"] for s in owned["secrets"]}
    assert types == {"extra": "Opaque", token_secret: "kubernetes.io/service-account-token"}
    assert token not in reply.data.decode() and '"data"' not in reply.data.decode()
    only = get(gateway, "/api/v1/serviceaccount/%s/builder/secret" % ns, admin_token,
               filterBy="name,ext")
    assert only["listMeta"] == {"totalItems": 1}

    pulls = get(gateway, "/api/v1/serviceaccount/%s/builder/imagepullsecret" % ns, admin_token)
    assert kube.names(pulls, "secrets") == ["regcred"]  # the missing one is not invented
    assert pulls["secrets"][0]["type"] == "kubernetes.io/dockerconfigjson"
    assert pulls["listMeta"] == {"totalItems": 1} and pulls["errors"] == []
    none = get(gateway, "/api/v1/serviceaccount/%s/default/imagepullsecret" % ns, admin_token)
    assert none["listMeta"] == {"totalItems": 0} and none["secrets"] == []


def test_pod_disruption_budgets(cluster, gateway, namespace, admin_token):
    ns = namespace
    version = cluster.served_version("policy", "poddisruptionbudgets", ("v1", "v1beta1"))
    path = "/apis/policy/%s/namespaces/%s/poddisruptionbudgets" % (version, ns)
    kube.pod(cluster, ns, "db-1", labels={"app": "db"})
    kube.pod(cluster, ns, "db-2", labels={"app": "db"})
    kube.wait_pods(cluster, ns, "app=db", 2)
    selector = {"matchLabels": {"app": "db"}}
    kube.create(cluster, path, {"metadata": {"name": "db"},
                                "spec": {"minAvailable": 1, "selector": selector}})
    kube.create(cluster, path, {"metadata": {"name": "half"}, "spec": {
        "maxUnavailable": "50%", "selector": {"matchLabels": {"app": "none"}}}})
    kube.wait_object(cluster, path + "/db", lambda b: b.get("status", {}).get(
        "currentHealthy") == 2 and b["status"].get("disruptionsAllowed") == 1,
        what="the disruption controller's status of db")

    body = get(gateway, "/api/v1/poddisruptionbudget/" + ns, admin_token, sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    db, half = body["items"]
    assert db["typeMeta"] == {"kind": "poddisruptionbudget"}
    assert (db["minAvailable"], db["maxUnavailable"], db["unhealthyPodEvictionPolicy"]) == (
        1, None, None)
    assert db["labelSelector"] == selector
    assert (db["currentHealthy"], db["desiredHealthy"], db["disruptionsAllowed"],
            db["expectedPods"]) == (2, 1, 1, 2)
    assert (half["minAvailable"], half["maxUnavailable"]) == (None, "50%")
    assert half["labelSelector"] == {"matchLabels": {"app": "none"}}

    d = get(gateway, "/api/v1/poddisruptionbudget/%s/db" % ns, admin_token)
    assert d["disruptedPods"] is None and d["expectedPods"] == 2 and d["minAvailable"] == 1
    assert d["objectMeta"]["name"] == "db"


def test_horizontal_pod_autoscalers(cluster, gateway, namespace, admin_token):
    ns = namespace
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    v2 = cluster.served_version("autoscaling", "horizontalpodautoscalers",
                                ("v2", "v2beta2"))
    v2_path = "/apis/autoscaling/%s/namespaces/%s/horizontalpodautoscalers" % (v2, ns)
    kube.create(cluster, v2_path, {"metadata": {"name": "web"}, "spec": {
        "scaleTargetRef": target, "minReplicas": 2, "maxReplicas": 6,
        "metrics": [{"type": "Resource", "resource": {
                        "name": "memory", "target": {"type": "AverageValue",
                                                     "averageValue": "100Mi"}}},
                    {"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization",
                                                  "averageUtilization": 70}}}]}})
    kube.create(cluster, "/apis/autoscaling/v1/namespaces/%s/horizontalpodautoscalers" % ns, {
        "metadata": {"name": "old-style"}, "spec": {
            "scaleTargetRef": dict(target, name="other"), "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50}})
    obj = cluster.request("GET", v2_path + "/web")[1]
    obj["status"] = {"currentReplicas": 3, "desiredReplicas": 4,
                     "lastScaleTime": "2024-05-01T10:00:00Z", "conditions": [],
                     "currentMetrics": [{"type": "Resource", "resource": {
                         "name": "cpu", "current": {"averageUtilization": 42,
                                                    "averageValue": "120m"}}}]}
    status, body = cluster.request("PUT", v2_path + "/web/status", obj)
    assert status == 200, body

    body = get(gateway, "/api/v1/horizontalpodautoscaler/" + ns, admin_token, sortBy="d,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    assert kube.names(body, "horizontalpodautoscalers") == ["web", "old-style"]
    web, old = body["horizontalpodautoscalers"]
    assert web["typeMeta"] == {"kind": "horizontalpodautoscaler"}
    assert web["scaleTargetRef"] == {"kind": "Deployment", "name": "web"}
    assert (web["minReplicas"], web["maxReplicas"]) == (2, 6)
    assert (web["currentCPUUtilizationPercentage"], web["targetCPUUtilizationPercentage"]) == (
        42, 70)
    # Created through autoscaling/v1, read through the newest version: the same percentages.
    assert (old["minReplicas"], old["maxReplicas"], old["targetCPUUtilizationPercentage"],
            old["currentCPUUtilizationPercentage"]) == (1, 3, 50, None)

    d = get(gateway, "/api/v1/horizontalpodautoscaler/%s/web" % ns, admin_token)
    assert (d["currentReplicas"], d["desiredReplicas"], d["lastScaleTime"]) == (
        3, 4, "2024-05-01T10:00:00Z")
    assert d["targetCPUUtilizationPercentage"] == 70 and "errors" not in d
    fresh = get(gateway, "/api/v1/horizontalpodautoscaler/%s/old-style" % ns, admin_token)
    assert (fresh["currentReplicas"], fresh["desiredReplicas"], fresh["lastScaleTime"]) == (
        0, 0, None)

    scaling = get(gateway, "/api/v1/deployment/%s/web/horizontalpodautoscaler" % ns,
                  admin_token)
    assert kube.names(scaling, "horizontalpodautoscalers") == ["web"]
    assert scaling["horizontalpodautoscalers"][0]["targetCPUUtilizationPercentage"] == 70


def test_access_rights(cluster, gateway, namespace, editor_token, norights_token):
    ns = namespace
    for kind, resource in (("role", "roles"), ("rolebinding", "rolebindings"),
                           ("serviceaccount", "serviceaccounts"),
                           ("poddisruptionbudget", "poddisruptionbudgets"),
                           ("horizontalpodautoscaler", "horizontalpodautoscalers")):
        forbidden(gateway, "/api/v1/%s/%s" % (kind, ns), norights_token, "list", resource)
        forbidden(gateway, "/api/v1/%s/%s/x" % (kind, ns), norights_token, "get", resource)
        assert gateway.get("/api/v1/%s/%s" % (kind, ns)).status == 401
    for kind in ("serviceaccount", "poddisruptionbudget", "horizontalpodautoscaler"):
        confined(gateway, kind, editor_token, ns)
    for kind, resource in (("clusterrole", "clusterroles"),
                           ("clusterrolebinding", "clusterrolebindings")):
        forbidden(gateway, "/api/v1/" + kind, norights_token, "list", resource)
        forbidden(gateway, "/api/v1/%s/x" % kind, norights_token, "get", resource)
        reply = gateway.get("/api/v1/" + kind, token=editor_token)
        assert reply.status == 403 and 'User "editor" cannot list' in reply.json()["message"]
    for suffix in ("secret", "imagepullsecret"):
        forbidden(gateway, "/api/v1/serviceaccount/%s/default/%s" % (ns, suffix),
                  norights_token, "get", "serviceaccounts")


def test_roles_confined_to_granted_namespace(cluster, gateway, namespace, other_namespace):
    """``edit`` does not cover RBAC objects: a reader of one namespace's roles and bindings."""
    token = kube.grant(cluster, namespace, "rbac-reader", [{
        "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
        "verbs": ["get", "list"]}])
    for kind in ("role", "rolebinding"):
        reply = gateway.get("/api/v1/%s/%s,%s" % (kind, namespace, other_namespace),
                            token=token)
        assert reply.status == 403, (kind, reply)
        for segment in ("", "/%20"):
            usable_only(gateway, "/api/v1/" + kind + segment, token, (namespace,))
        body = get(gateway, "/api/v1/%s/%s" % (kind, namespace), token)
        assert kube.names(body, "items") == ["rbac-reader"] and body["errors"] == []


def test_service_account_secrets_need_secret_rights(cluster, gateway, namespace):
    token = kube.grant(cluster, namespace, "sa-reader", [{
        "apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["get", "list"]}])
    assert get(gateway, "/api/v1/serviceaccount/%s/sa-reader" % namespace, token)["errors"] == []
    reply = gateway.get("/api/v1/serviceaccount/%s/sa-reader/secret" % namespace, token=token)
    assert reply.status == 403, reply
    assert 'cannot list resource "secrets"' in reply.json()["message"]


def test_access_missing_is_404(gateway, namespace, admin_token):
    ns = namespace
    for kind, what in (("role", "roles.rbac.authorization.k8s.io"),
                       ("rolebinding", "rolebindings.rbac.authorization.k8s.io"),
                       ("serviceaccount", "serviceaccounts"),
                       ("poddisruptionbudget", "poddisruptionbudgets.policy"),
                       ("horizontalpodautoscaler", "horizontalpodautoscalers.autoscaling")):
        missing(gateway, "/api/v1/%s/%s/nope" % (kind, ns), admin_token,
                '%s "nope" not found' % what)
    for suffix in ("secret", "imagepullsecret"):
        missing(gateway, "/api/v1/serviceaccount/%s/nope/%s" % (ns, suffix), admin_token,
                'serviceaccounts "nope" not found')
    absent = "nope-" + secrets.token_hex(4)
    for kind in ("clusterrole", "clusterrolebinding"):
        missing(gateway, "/api/v1/%s/%s" % (kind, absent), admin_token,
                '%ss.rbac.authorization.k8s.io "%s" not found' % (kind, absent))
