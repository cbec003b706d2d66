import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="module")
def gateway(cluster):
    """One gateway per test module, with CSRF protection on."""
    gw = Gateway.start(cluster, "--enable-openapi")
    yield gw
    gw.stop()


@pytest.fixture
def widgets(cluster, cluster_objects, namespace):
    """A CRD of a fresh group (Widget, with a scale subresource) and a widget w-1 in
    ``namespace``; returns (group, path of w-1)."""
    import secrets

    from tests.resources.test_crd import create_object, define, established, version
    group = "w%s.example.com" % secrets.token_hex(4)
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    name = define(cluster, cluster_objects, group, "widgets", "Widget", "Namespaced",
                  [version("v1", storage=True, subresources={"scale": scale, "status": {}})])
    established(cluster, name)
    path = "/apis/%s/v1/namespaces/%s/widgets" % (group, namespace)
    create_object(cluster, path, {"apiVersion": group + "/v1", "kind": "Widget",
                                  "metadata": {"name": "w-1"}, "spec": {"replicas": 1}})
    return group, path + "/w-1"
