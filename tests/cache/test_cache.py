"""The shared watch cache against the real API server: cached lists equal the pass-through
lists after random changes; revoked rights, API server restarts and a service identity without
rights; and the RBAC manifests of conf/kubernetes suffice for the cache."""

import os
import random
import time

import pytest
import yaml

from dashboard_api.cache import watchcache as cache
from dashboard_api.kinds import table as kinds
from dashboard_api.lists import rbacstamp
from tests.cache.helpers import (authorization_misses, body, converge, kind_state, series,
                                 wait_synced)
from tests.cluster import users
from tests.resources import kube
from tests.support.gateway import ROOT, Gateway

LIST_KINDS = ("pod", "deployment", "replicaset", "event", "namespace", "node", "configmap")


def _pods_path(ns):
    return "/api/v1/namespaces/%s/pods" % ns


def _relabel(cluster, ns, name, value):
    """A label change on a live pod (retried: the node simulator updates pods too)."""
    for _ in range(10):
        status, pod = cluster.request("GET", "%s/%s" % (_pods_path(ns), name))
        if status != 200:
            return
        pod["metadata"].setdefault("labels", {})["tier"] = value
        status, _ = cluster.request("PUT", "%s/%s" % (_pods_path(ns), name), pod)
        if status != 409:
            return


def test_cached_lists_equal_passthrough_after_random_changes(
        cluster, cached, passthrough, namespace, other_namespace, admin_token):
    wait_synced(cached, LIST_KINDS)
    rng = random.Random(20261123)
    pods = {namespace: [], other_namespace: []}

    def new_pod(ns):
        name = "p%03d" % rng.randrange(1000)
        if name in pods[ns]:
            return
        image = rng.choice(["nginx:1.19", "busybox:1.36", "example/app:1"])
        kube.pod(cluster, ns, name, labels={"app": rng.choice("ab"), "n": name})
        pods[ns].append(name)
        if rng.random() < 0.5:
            kube.event(cluster, ns, "ev-" + name, {"kind": "Pod", "name": name, "namespace": ns},
                       rng.choice(["BackOff", "Pulled", "FailedMount"]), "about %s" % image,
                       type_=rng.choice([None, "Warning", "Normal"]))

    for _ in range(8):
        new_pod(namespace)
    for _ in range(3):
        new_pod(other_namespace)
    for name in ("web", "api"):
        kube.apps(cluster, namespace, "deployments", name, {"app": name}, replicas=2)
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "settings"}, "data": {"secret-ish": "x" * 100}})

    for _ in range(20):  # changes made while the cache watches
        op = rng.choice(["create", "create", "delete", "relabel", "scale"])
        ns = rng.choice([namespace, namespace, other_namespace])
        if op == "create" or not pods[ns]:
            new_pod(ns)
        elif op == "delete":
            name = pods[ns].pop(rng.randrange(len(pods[ns])))
            cluster.request("DELETE", "%s/%s" % (_pods_path(ns), name),
                            params={"gracePeriodSeconds": "0"})
        elif op == "relabel":
            _relabel(cluster, ns, rng.choice(pods[ns]), rng.choice(["x", "y"]))
        else:
            status, _ = cluster.request(
                "PATCH", "/apis/apps/v1/namespaces/%s/deployments/web" % namespace,
                {"spec": {"replicas": rng.randrange(4)}},
                content_type="application/merge-patch+json")
            assert status == 200

    # An object's events sublist (by name and kind in its namespace, read off the cache's
    # "named" index, issue #30): events about a same-named object of another kind, or in
    # another namespace, are not its own; a node's over every namespace.
    kube.pod(cluster, namespace, "twin", labels={"app": "twin"})
    created = {"ev-twin", "ev-twin-svc", "ev-twin-other", "ev-web", "ev-web-rs",
               "ev-node-" + namespace}
    for ns, name, kind in ((namespace, "ev-twin", "Pod"), (namespace, "ev-twin-svc", "Service"),
                           (other_namespace, "ev-twin-other", "Pod"),
                           (namespace, "ev-web", "Deployment"), (namespace, "ev-web-rs",
                                                                 "ReplicaSet")):
        involved = "twin" if "twin" in name else "web"
        kube.event(cluster, ns, name, {"kind": kind, "name": involved, "namespace": ns},
                   "Tested", "about %s %s" % (kind, involved))
    node_event = "ev-node-" + namespace   # about a cluster object: in "default"
    kube.event(cluster, "default", node_event, {"kind": "Node", "name": "sim-node-1",
                                                "uid": "sim-node-1"}, "Rebooted", "node")
    sublists = {"/api/v1/pod/%s/twin/event" % namespace: ["ev-twin"],
                "/api/v1/deployment/%s/web/event" % namespace: ["ev-web"],
                "/api/v1/node/sim-node-1/event": [node_event]}

    both = "%s,%s" % (namespace, other_namespace)
    misses = authorization_misses(cached)
    converge(cached, passthrough, [
        "/api/v1/pod/%s?sortBy=d,creationTimestamp&itemsPerPage=5" % namespace,
        "/api/v1/pod/%s?sortBy=a,name&itemsPerPage=3&page=2" % namespace,
        "/api/v1/pod/%s?filterBy=name,p&sortBy=d,name,a,namespace" % both,
        "/api/v1/pod/%s?sortBy=a,status&itemsPerPage=0&page=0" % both,
        "/api/v1/pod?sortBy=a,name&itemsPerPage=50",
        "/api/v1/deployment/%s" % namespace,
        "/api/v1/replicaset/%s?sortBy=a,name" % namespace,
        "/api/v1/event/%s?sortBy=d,lastSeen,a,name" % namespace,
        "/api/v1/event/%s" % both,
        "/api/v1/configmap/%s" % namespace,
        "/api/v1/namespace?filterBy=name,t-&sortBy=a,name&itemsPerPage=100",
        "/api/v1/node",
        "/api/v1/deployment/%s/web" % namespace,
        "/api/v1/deployment/%s/web/newreplicaset" % namespace,
    ] + list(sublists), admin_token)
    for path, names in sublists.items():
        found = [e["objectMeta"]["name"] for e in body(cached, path, admin_token)["events"]]
        assert [n for n in found if n in created] == names, path
    # The cached gateway did answer from its cache: it asked the API server for the caller's
    # rights, which only the cache path does.
    assert authorization_misses(cached) > misses
    detail = body(cached, "/api/v1/configmap/%s/settings" % namespace, admin_token)
    assert detail["data"] == {"secret-ish": "x" * 100}  # details still come from the API server


def test_every_kind_lists_the_same_from_the_cache(seeded_cluster, cached, passthrough,
                                                  admin_token, editor_token):
    """Every kind of the kinds table, over the sample workloads: all namespaces, sorted and
    paged, and for the namespace editor (whose "all namespaces" is team-a)."""
    wait_synced(cached, cache.cached_names(), timeout=60)
    paths = []
    for kind in kinds.TABLE:
        paths += ["/api/v1/%s?sortBy=d,creationTimestamp,a,name&itemsPerPage=100" % kind.name,
                  "/api/v1/%s?itemsPerPage=3&page=2" % kind.name]
    converge(cached, passthrough, paths, admin_token, timeout=60)
    editable = []
    for kind in kinds.TABLE:
        path = "/api/v1/" + kind.name
        refused = passthrough.get(path, token=editor_token)
        if refused.status == 200:
            editable.append(path)
            continue
        same = cached.get(path, token=editor_token)  # e.g. roles: edit does not cover them
        assert (same.status, same.json()) == (refused.status, refused.json()), path
    assert "/api/v1/pod" in editable
    converge(cached, passthrough, editable, editor_token, timeout=60)


def test_cache_keeps_no_secrets_and_still_lists_them(cluster, cached, passthrough, namespace,
                                                     admin_token, editor_token):
    assert "secret" not in series(cached, "dashboard_cache_state").__repr__()
    kube.create(cluster, "/api/v1/namespaces/%s/secrets" % namespace,
                {"metadata": {"name": "s1"}, "stringData": {"k": "v"}})
    path = "/api/v1/secret/%s" % namespace
    converge(cached, passthrough, [path], admin_token)
    assert "s1" in [s["objectMeta"]["name"] for s in body(cached, path, admin_token)["secrets"]]
    reply = cached.get(path, token=editor_token)
    assert reply.status == 403 and 'User "editor" cannot list resource "secrets"' in \
        reply.json()["message"]


def test_callers_without_rights_and_bad_tokens(cached, namespace, norights_token):
    wait_synced(cached, ("pod",))
    assert cached.get("/api/v1/pod/" + namespace).status == 401
    assert cached.get("/api/v1/pod/" + namespace, token="not-a-token").status == 401
    reply = cached.get("/api/v1/pod/" + namespace, token=norights_token)
    assert reply.status == 403
    message = reply.json()["message"]
    assert 'User "nobody" cannot list resource "pods"' in message and namespace in message
    # No rights anywhere: "all namespaces" is still the API server's 403.
    reply = cached.get("/api/v1/pod", token=norights_token)
    assert reply.status == 403 and "at the cluster scope" in reply.json()["message"]


def test_revoked_binding_stops_cached_list_within_the_ttl(cluster, cached, namespace):
    wait_synced(cached, ("pod",))
    kube.pod(cluster, namespace, "seen")
    token = kube.grant(cluster, namespace, "lister", [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}])
    path = "/api/v1/pod/" + namespace
    first = cached.get(path, token=token)
    assert first.status == 200 and [p["objectMeta"]["name"] for p in first.json()["pods"]] == \
        ["seen"]
    status, _ = cluster.request(
        "DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings/lister"
        % namespace)
    assert status == 200
    revoked = time.monotonic()
    deadline = revoked + 15
    while time.monotonic() < deadline:
        reply = cached.get(path, token=token)
        if reply.status == 403:
            break
        time.sleep(0.2)
    assert reply.status == 403, reply
    assert 'cannot list resource "pods"' in reply.json()["message"]
    # The API server's own authorizer learns of the deletion first; the TTL adds one second.
    assert time.monotonic() - revoked < 15


def _checks(gateway):
    counts = series(gateway, "dashboard_cache_authorization_checks")
    return counts.get('result="miss"', 0), counts.get('result="vouched"', 0)


@pytest.fixture(scope="module")
def keeping(cluster):
    """A gateway keeping list rights for up to two minutes while RBAC is unchanged."""
    gw = Gateway.start(cluster, "--access-cache-ttl=1s", "--access-cache-max-age=120s")
    yield gw
    gw.stop()


def test_a_right_is_kept_past_the_ttl_while_rbac_is_unchanged_and_asked_after_any_change(
        cluster, keeping, namespace):
    """--access-cache-max-age (here 120 s, the TTL 1 s): while the watched roles, bindings
    and service accounts are unchanged, a caller's list right is used past the TTL without a
    review; a role made anywhere has it asked again; the service account deleted ends its
    token's lists as soon as the API server refuses the token, not after the max age."""
    cached = keeping
    wait_synced(cached, ("pod", "event", "role", "rolebinding", "clusterrole",
                         "clusterrolebinding", "serviceaccount"))
    token = kube.grant(cluster, namespace, "keeper", [
        {"apiGroups": [""], "resources": ["pods", "events"], "verbs": ["list"]}])
    path = "/api/v1/pod/" + namespace
    # Asked again past each TTL while RBAC is unsettled: the grant's own changes, and the
    # namespace controller still emptying earlier tests' namespaces of their accounts and
    # roles. Once an answer was asked under a stamp settled for SETTLE seconds, the next
    # request past the TTL is answered without a review.
    kept = False
    deadline = time.monotonic() + 4 * rbacstamp.SETTLE
    while not kept and time.monotonic() < deadline:
        misses, vouched = _checks(cached)
        assert cached.get(path, token=token).status == 200
        after = _checks(cached)
        kept = after[0] == misses and after[1] > vouched   # no review: the right was kept
        if not kept:
            time.sleep(1.2)  # past the TTL
    assert kept, _checks(cached)

    # Any RBAC change: the next request past the TTL asks the API server again.
    kube.create(cluster, "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles" % namespace,
                {"metadata": {"name": "unrelated"}, "rules": []})
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        misses, _vouched = _checks(cached)
        assert cached.get(path, token=token).status == 200
        if _checks(cached)[0] > misses:
            break
        time.sleep(0.3)
    assert _checks(cached)[0] > misses, "the right was not asked again after a role was made"

    # The account deleted: refused once the API server refuses the token (its own token
    # cache keeps it 10 s; no answer asked meanwhile is kept past the TTL), far within the
    # max age.
    status, _ = cluster.request("DELETE", "/api/v1/namespaces/%s/serviceaccounts/keeper"
                                % namespace)
    assert status == 200
    deleted = time.monotonic()
    while time.monotonic() < deleted + 40:
        reply = cached.get(path, token=token)
        if reply.status == 401:
            break
        time.sleep(0.3)
    assert reply.status == 401, reply


def test_all_namespaces_for_a_namespace_editor_on_both_paths(cached, passthrough,
                                                             editor_token):
    """The editor may list in team-a only: "all namespaces" is team-a's list on the cached and
    the pass-through path alike, and the namespace list shows team-a."""
    wait_synced(cached, ("pod", "namespace"))
    for gw in (cached, passthrough):
        own = body(gw, "/api/v1/pod/team-a", editor_token)
        assert body(gw, "/api/v1/pod/%20", editor_token)["pods"] == own["pods"]
        names = [n["objectMeta"]["name"] for n in body(gw, "/api/v1/namespace",
                                                       editor_token)["namespaces"]]
        assert names == ["team-a"]
    converge(cached, passthrough, ["/api/v1/pod", "/api/v1/deployment"], editor_token)


def _kubeconfig(cluster, tmp_path, token):
    path = str(tmp_path / "service.kubeconfig")
    users.write_kubeconfig(path, cluster.url, cluster.ca_file, "service", token)
    return path


def test_service_identity_without_rights_falls_back(cluster, passthrough, namespace,
                                                    admin_token, tmp_path):
    kube.create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % namespace,
                {"metadata": {"name": "powerless"}})
    token = cluster.service_account_token(namespace, "powerless")
    kube.pod(cluster, namespace, "only")
    gw = Gateway.start(cluster, "--kubeconfig", _kubeconfig(cluster, tmp_path, token),
                       kubeconfig=False)
    try:
        cluster.wait_for(lambda: kind_state(gw, "pod") == "unavailable", timeout=30,
                         what="the pod cache to be unavailable")
        converge(gw, passthrough, ["/api/v1/pod/" + namespace, "/api/v1/pod?sortBy=a,name"],
                 admin_token)
        assert authorization_misses(gw) == 0  # no cache hit: every list went through
    finally:
        gw.stop()


_PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


def test_rbac_manifests_suffice_for_the_cache(cluster, passthrough, namespace, admin_token,
                                              tmp_path):
    with open(os.path.join(ROOT, "conf", "kubernetes", "rbac.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    rules = next(d for d in docs if d["kind"] == "ClusterRole")["rules"]
    assert not any("secrets" in r["resources"] or "*" in r["resources"] for r in rules)
    assert {v for r in rules for v in r["verbs"]} == {"list", "watch"}
    status, _ = cluster.request("POST", "/api/v1/namespaces",
                                {"metadata": {"name": "kubernetes-dashboard"}})
    assert status in (201, 409)
    created = []
    try:
        for doc in docs:
            path = _PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace"))
            status, reply = cluster.request("POST", path, doc)
            assert status == 201, (doc["kind"], reply)
            created.append(path + "/" + doc["metadata"]["name"])
        token = cluster.service_account_token("kubernetes-dashboard", "dashboard-api")
        gw = Gateway.start(cluster, "--kubeconfig", _kubeconfig(cluster, tmp_path, token),
                           kubeconfig=False)
        try:
            cached_kinds = cache.cached_names()
            wait_synced(gw, cached_kinds, timeout=60)
            kube.pod(cluster, namespace, "visible")
            converge(gw, passthrough, ["/api/v1/pod/" + namespace,
                                       "/api/v1/deployment?itemsPerPage=5"], admin_token)
        finally:
            gw.stop()
    finally:
        for path in reversed(created):
            cluster.request("DELETE", path)


def test_apiserver_restart_is_survived(cluster, cached, passthrough, namespace, admin_token):
    wait_synced(cached, ("pod",))
    kube.pod(cluster, namespace, "before")
    path = "/api/v1/pod/%s?sortBy=a,name" % namespace
    converge(cached, passthrough, [path], admin_token)
    restarts = sum(series(cached, "dashboard_cache_watch_restarts").values())
    cluster.restart_apiserver()
    kube.pod(cluster, namespace, "after")
    cluster.request("DELETE", "%s/before" % _pods_path(namespace),
                    params={"gracePeriodSeconds": "0"})
    converge(cached, passthrough, [path], admin_token, timeout=60)
    names = [p["objectMeta"]["name"] for p in body(cached, path, admin_token)["pods"]]
    assert "after" in names
    assert sum(series(cached, "dashboard_cache_watch_restarts").values()) > restarts
