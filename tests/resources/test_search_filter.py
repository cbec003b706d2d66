"""The search query as every list's name filter (issue #38): ``filterBy=name,<query>`` on the
list routes of the watch cache's gateway, with the admin, the one-namespace editor and the
no-rights token."""

from tests.resources import kube, searchcases
from tests.resources.checks import forbidden


def test_every_term_on_the_lists(cluster, gateway, namespace, admin_token, cache_caught_up):
    label = searchcases.seed(cluster, namespace)
    cache_caught_up("pod", "deployment", "replicaset", "configmap", "service")
    searchcases.check(gateway, admin_token, namespace, label)
    # across all namespaces, cluster-scoped lists too
    total, found = searchcases.names(gateway, "/api/v1/pod", admin_token, label)
    assert total == 4 and found[:3] == ["db-0", "stuck", "web-1"]
    node = cluster.nodes[0]
    status, obj = cluster.request("GET", "/api/v1/nodes/" + node)
    ready = [c["status"] for c in obj["status"]["conditions"] if c["type"] == "Ready"]
    shown = "ready" if ready == ["True"] else "notready" if ready == ["False"] else "unknown"
    assert searchcases.names(gateway, "/api/v1/node", admin_token,
                             "status:%s %s" % (shown, node)) == (1, [node])
    assert searchcases.names(gateway, "/api/v1/namespace", admin_token,
                             "status:active " + namespace) == (1, [namespace])
    for path in ("/api/v1/pod/" + namespace, "/api/v1/node", "/api/v1/event"):
        searchcases.bad_query(gateway, path, admin_token)


def test_the_editor_finds_only_their_namespace(cluster, gateway, namespace, admin_token,
                                               editor_token, norights_token, cache_caught_up):
    label = "label:search=" + namespace
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "theirs", "labels": {"search": namespace}}})
    kube.create(cluster, "/api/v1/namespaces/team-a/configmaps",
                {"metadata": {"name": "mine-" + namespace, "labels": {"search": namespace}}})
    try:
        cache_caught_up("configmap")
        assert searchcases.names(gateway, "/api/v1/configmap", admin_token, label) == (
            2, ["mine-" + namespace, "theirs"])
        for path in ("/api/v1/configmap", "/api/v1/configmap/team-a",
                     "/api/v1/configmap/%20"):
            assert searchcases.names(gateway, path, editor_token, label) == (
                1, ["mine-" + namespace]), path
        reply = gateway.get("/api/v1/configmap/" + namespace, token=editor_token,
                            params={"filterBy": "name," + label})
        assert reply.status == 403 and 'User "editor" cannot list' in reply.json()["message"]
        forbidden(gateway, "/api/v1/configmap?filterBy=name," + label, norights_token, "list",
                  "configmaps")
        # a bad query is a 400 before anything is asked
        searchcases.bad_query(gateway, "/api/v1/configmap", norights_token)
    finally:
        cluster.request("DELETE", "/api/v1/namespaces/team-a/configmaps/mine-" + namespace)
