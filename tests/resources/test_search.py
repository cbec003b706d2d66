"""GET /api/v1/search (issue #38): every kind the gateway lists searched at once from the watch
cache, ranked and paged, with the lists' authorization: the admin, the one-namespace editor and
the no-rights token on the real cluster."""

import time

from tests.resources import kube, searchcases


def search(gateway, token, q, **params):
    reply = gateway.get("/api/v1/search", token=token, params=dict(params, q=q))
    assert reply.status == 200, (q, reply)
    return reply.json()


def found(body):
    return [(i["kind"], i["objectMeta"]["name"]) for i in body["items"]]


def skipped(body):
    return {s["kind"]: s["reason"] for s in body["skipped"]}


def test_search_every_kind_ranked_and_paged(cluster, gateway, namespace, admin_token,
                                            cache_caught_up):
    label = searchcases.seed(cluster, namespace)
    cache_caught_up("pod", "deployment", "replicaset", "configmap", "service")
    body = search(gateway, admin_token, label, itemsPerPage="50")
    counts = {k["kind"]: k["totalItems"] for k in body["kinds"]}
    assert {k: n for k, n in counts.items() if n} == {
        "pod": 4, "deployment": 1, "replicaset": 1, "configmap": 1}
    assert body["listMeta"] == {"totalItems": 7} and len(body["items"]) == 7
    assert {"node", "namespace", "clusterrole", "persistentvolume"} <= set(counts)
    assert skipped(body)["event"] == "events are searched only when kind:event asks for them"
    assert "kind:secret searches it" in skipped(body)["secret"]
    assert "event" not in counts and "secret" not in counts
    items = {(i["kind"], i["objectMeta"]["name"]): i for i in body["items"]}
    assert items[("pod", "stuck")]["status"] == "Pending"
    assert items[("pod", "web-1")]["status"] == "Running"
    assert items[("deployment", "web")]["status"] == "Running"
    assert items[("configmap", "web-config")]["status"] == ""
    assert items[("pod", "db-0")]["objectMeta"]["labels"] == {"search": namespace, "app": "db"}
    assert all(i["objectMeta"]["namespace"] == namespace for i in body["items"])
    times = [i["objectMeta"]["creationTimestamp"] for i in body["items"]]
    assert times == sorted(times, reverse=True)   # no word: newest first

    # ranked: the names equal to a word, then those starting with one, then the rest
    body = search(gateway, admin_token, "web ns:" + namespace, itemsPerPage="50")
    names = found(body)
    exact = sorted(names[:2])
    assert exact == [("deployment", "web"), ("service", "web")], names
    assert {n for _k, n in names[2:]} >= {"web-1", "web-config"}
    assert all(n.startswith("web") for _k, n in names)
    second = search(gateway, admin_token, "web ns:" + namespace, itemsPerPage="2", page="2")
    assert found(second) == names[2:4] and second["listMeta"] == body["listMeta"]
    assert found(search(gateway, admin_token, "kind:service|pods web ns:" + namespace)) == [
        ("service", "web")] + [n for n in names if n[0] == "pod"]

    # terms narrow across kinds
    assert found(search(gateway, admin_token, "status:pend ns:" + namespace)) == [
        ("pod", "stuck")]
    assert found(search(gateway, admin_token, "image:postgres ns:" + namespace)) == [
        ("pod", "db-0")]
    replica_set = next(n for k, n in names if k == "replicaset")
    its_pod = next(n for k, n in names if k == "pod" and n != "web-1")
    assert sorted(found(search(gateway, admin_token, label + " image:nginx label:app"))) == \
        [("deployment", "web"), ("pod", its_pod), ("replicaset", replica_set)]


def test_kinds_on_request_and_not_cached(cluster, gateway, namespace, admin_token,
                                         cache_caught_up):
    kube.create(cluster, "/api/v1/namespaces/%s/secrets" % namespace,
                {"metadata": {"name": "web-secret", "labels": {"search": namespace}},
                 "stringData": {"password": "s3cr3t-value"}})
    stuck = kube.pod(cluster, namespace, "web-x", nodeName="no-such-node")
    kube.event(cluster, namespace, "web-x.1", kube.involved(stuck, "Pod"), "Odd", "odd")
    cache_caught_up("pod", "event")
    body = search(gateway, admin_token, "kind:secret|event web ns:" + namespace)
    assert sorted(found(body)) == [("event", "web-x.1"), ("secret", "web-secret")]
    assert body["skipped"] == [] and "s3cr3t" not in str(body)
    secret = next(i for i in body["items"] if i["kind"] == "secret")
    assert set(secret) == {"kind", "objectMeta", "status"}
    assert secret["objectMeta"]["labels"] == {"search": namespace}


def test_made_and_deleted_objects_are_found_and_gone(cluster, gateway, namespace, admin_token):
    path = "/api/v1/namespaces/%s/configmaps" % namespace
    kube.create(cluster, path, {"metadata": {"name": "fresh-one"}})
    q = "fresh-one ns:" + namespace

    def until(expected):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if found(search(gateway, admin_token, q)) == expected:
                return True
            time.sleep(0.05)
        return False
    assert until([("configmap", "fresh-one")])
    cluster.request("DELETE", path + "/fresh-one")
    assert until([])


def test_bad_requests(gateway, admin_token):
    for params, named in (({"q": "web foo:bar"}, "'foo:bar': unknown prefix 'foo:'"),
                          ({"q": "kind:nosuch"}, "'kind:nosuch': no kind 'nosuch'"),
                          ({"q": "label:=x"}, "'' is not a label key"),
                          ({"q": "x" * 300}, "at most 256 characters"),
                          ({"q": "web", "itemsPerPage": "501"}, "at most 500 items"),
                          ({"q": "web", "page": "0"}, "page must be at least 1"),
                          ({"q": "web", "page": "11", "itemsPerPage": "100"}, "narrow"),
                          ({"q": "web", "itemsPerPage": "x"}, "itemsPerPage must be")):
        reply = gateway.get("/api/v1/search", token=admin_token, params=params)
        assert reply.status == 400, (params, reply)
        body = reply.json()
        assert body["reason"] == "BadRequest" and named in body["message"], (params, body)
    assert gateway.get("/api/v1/search", params={"q": "web"}).status == 401


def test_the_editor_finds_only_their_namespace(cluster, gateway, namespace, admin_token,
                                               editor_token, cache_caught_up):
    mark = {"search": namespace}
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "theirs", "labels": mark}})
    kube.create(cluster, "/api/v1/namespaces/team-a/configmaps",
                {"metadata": {"name": "mine-" + namespace, "labels": mark}})
    kube.create(cluster, "/api/v1/namespaces/team-a/services",
                {"metadata": {"name": "svc-" + namespace, "labels": mark},
                 "spec": {"ports": [{"port": 80}]}})
    try:
        cache_caught_up("configmap", "service")
        label = "label:search=" + namespace
        assert sorted(found(search(gateway, admin_token, label))) == [
            ("configmap", "mine-" + namespace), ("configmap", "theirs"),
            ("service", "svc-" + namespace)]
        body = search(gateway, editor_token, label)
        assert sorted(found(body)) == [("configmap", "mine-" + namespace),
                                       ("service", "svc-" + namespace)]
        reasons = skipped(body)
        # cluster-scoped kinds they may not list are skipped, with why
        assert reasons["node"] == "forbidden: you may not list nodes"
        assert reasons["clusterrole"] == "forbidden: you may not list clusterroles"
        assert "pod" not in reasons and "configmap" not in reasons
        # their namespace named: the same; another one: every namespaced kind refused
        assert sorted(found(search(gateway, editor_token, label + " ns:team-a"))) == sorted(
            found(body))
        other = search(gateway, editor_token, label + " ns:" + namespace)
        assert other["items"] == [] and other["listMeta"] == {"totalItems": 0}
        assert skipped(other)["configmap"] == "forbidden: you may not list configmaps in " + \
            namespace
    finally:
        for path in ("configmaps/mine-", "services/svc-"):
            cluster.request("DELETE", "/api/v1/namespaces/team-a/" + path + namespace)


def test_no_rights_no_items_no_error(gateway, norights_token):
    body = search(gateway, norights_token, "web")
    assert body["items"] == [] and body["listMeta"] == {"totalItems": 0}
    assert body["kinds"] == []
    reasons = skipped(body)
    assert reasons["pod"] == "forbidden: you may not list pods in any namespace"
    assert reasons["node"] == "forbidden: you may not list nodes"
    assert all(r.startswith("forbidden") for k, r in reasons.items()
               if k not in ("event", "secret", "lease")), reasons
