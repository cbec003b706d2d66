"""The gateway against the local cluster, in a few calls: nox runs it on every supported Python
(noxfile.py), beside tests/unit, to show that the whole gateway starts and serves there."""

from tests.resources import kube


def _names(items):
    return {item["objectMeta"]["name"] for item in items}


def test_namespaces_and_pods_with_a_token(cluster, gateway, namespace, admin_token):
    kube.pod(cluster, namespace, "smoke")

    def listed():
        # Filtered to the one namespace: a page holds 10, and the shared cluster has more.
        namespaces = gateway.get("/api/v1/namespace?filterBy=name," + namespace,
                                 token=admin_token)
        pods = gateway.get("/api/v1/pod/" + namespace, token=admin_token)
        assert namespaces.status == 200 and pods.status == 200, (namespaces, pods)
        if namespace in _names(namespaces.json()["namespaces"]) and pods.json()["pods"]:
            return pods.json()
    pods = cluster.wait_for(listed, timeout=30, what="the namespace and its pod listed")
    assert _names(pods["pods"]) == {"smoke"}
    assert pods["listMeta"]["totalItems"] == 1

    refused = gateway.get("/api/v1/pod/" + namespace, token="not-a-token")
    assert refused.status == 401
    assert gateway.get("/api/v1/pod/" + namespace).status == 401
