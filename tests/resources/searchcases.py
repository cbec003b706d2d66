"""The objects and answers of the search-in-a-list tests (issue #38): ``filterBy=name,<query>``
on the list routes, the same against the watch cache's gateway (tests/resources/
test_search_filter.py) and the pass-through one (tests/passthrough/test_search_filter.py)."""

from tests.resources import kube


def seed(cluster, ns):
    """Pods, a deployment (its replica set and pod), a config map and a service in ``ns``,
    labelled ``search=<ns>`` but the service; returns the label term."""
    mark = {"search": ns}
    kube.pod(cluster, ns, "web-1", labels=dict(mark, tier="front"))
    kube.pod(cluster, ns, "db-0", labels=dict(mark, app="db"),
             containers=[kube.container("db", "postgres:13"),
                         kube.container("side", "busybox:1.32")])
    kube.pod(cluster, ns, "stuck", labels=mark, nodeName="no-such-node")
    kube.apps(cluster, ns, "deployments", "web", dict(mark, app="web"))
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns,
                {"metadata": {"name": "web-config", "labels": mark}, "data": {"a": "b"}})
    kube.service(cluster, ns, "web", {"app": "web"})
    kube.wait_pods(cluster, ns, "search=" + ns + ",app in (web,db)", 2)
    kube.wait_pods(cluster, ns, "tier=front", 1)
    return "label:search=" + ns


def names(gateway, path, token, query, **params):
    """(totalItems, names in order) of a list filtered by ``query``."""
    reply = gateway.get(path, token=token, params=dict(params, filterBy="name," + query,
                                                       sortBy="a,name"))
    assert reply.status == 200, (path, query, reply)
    body = reply.json()
    return body["listMeta"]["totalItems"], [i["objectMeta"]["name"] for i in body["items"]]


def check(gateway, token, ns, label):
    """Every term on the lists of ``ns``, as the cache and the pass-through give them."""
    pods = "/api/v1/pod/" + ns
    total, found = names(gateway, pods, token, label)
    assert total == 4 and found[:3] == ["db-0", "stuck", "web-1"], found
    assert found[3].startswith("web-")
    assert names(gateway, "/api/v1/deployment/" + ns, token, label) == (1, ["web"])
    total, sets = names(gateway, "/api/v1/replicaset/" + ns, token, label)
    assert total == 1 and sets[0].startswith("web-")
    assert names(gateway, "/api/v1/configmap/" + ns, token, label) == (1, ["web-config"])
    assert names(gateway, "/api/v1/service/" + ns, token, label) == (0, [])
    assert names(gateway, "/api/v1/service/" + ns, token, "WEB") == (1, ["web"])
    assert names(gateway, pods, token, "WEB-1") == (1, ["web-1"])
    assert names(gateway, pods, token, label + " label:tier=front|x") == (1, ["web-1"])
    assert names(gateway, pods, token, label + " label:!app") == (2, ["stuck", "web-1"])
    assert names(gateway, pods, token, label + " label:app!=web") == (3, ["db-0", "stuck",
                                                                          "web-1"])
    assert names(gateway, pods, token, "status:pending") == (1, ["stuck"])
    assert names(gateway, pods, token, "status:running web") == (2, ["web-1", found[3]])
    assert names(gateway, pods, token, "node:no-such-node") == (1, ["stuck"])
    assert names(gateway, pods, token, "image:POSTGRES") == (1, ["db-0"])
    assert names(gateway, "/api/v1/deployment/" + ns, token, "image:nginx") == (1, ["web"])
    # "db-0", not "db": a generated name ("web-<hash>-<suffix>") may hold "db", never a "0"
    assert names(gateway, pods, token, "ns:" + ns + " kind:pods db-0") == (1, ["db-0"])
    assert names(gateway, pods, token, "ns:other db") == (0, [])
    assert names(gateway, "/api/v1/configmap/" + ns, token, "kind:pod") == (0, [])
    # a workload's status is its bucket in the list's status block: running
    assert names(gateway, "/api/v1/deployment/" + ns, token, "status:running") == (1, ["web"])
    assert names(gateway, "/api/v1/deployment/" + ns, token, "status:failed") == (0, [])
    # the other properties filter as before, and a page is a page of the matches
    assert names(gateway, pods, token, label, itemsPerPage="2", page="2")[1] == found[2:]


def bad_query(gateway, path, token):
    """A malformed query is a 400 with the specification's error body naming the term."""
    reply = gateway.get(path, token=token, params={"filterBy": "name,web foo:bar"})
    assert reply.status == 400, reply
    body = reply.json()
    assert body["code"] == 400 and body["reason"] == "BadRequest", body
    assert "'foo:bar'" in body["message"] and "unknown prefix" in body["message"], body
