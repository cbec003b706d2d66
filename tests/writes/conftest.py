import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="module")
def gateway(cluster):
    """One gateway per test module, with CSRF protection on."""
    gw = Gateway.start(cluster, "--enable-openapi")
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def widget_group(cluster):
    """A CRD of a fresh group (Widget, with a scale subresource), established; deleted after
    the module. Its own fixture, so that a module may have it defined before its gateway
    starts (tests/writes/test_scale.py)."""
    import secrets

    from tests.resources.test_crd import define, established, version
    group = "w%s.example.com" % secrets.token_hex(4)
    scale = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
    made = []
    name = define(cluster, made, group, "widgets", "Widget", "Namespaced",
                  [version("v1", storage=True, subresources={"scale": scale, "status": {}})])
    try:
        established(cluster, name)
        yield group
    finally:
        for path in made:
            cluster.request("DELETE", path)


@pytest.fixture
def widgets(cluster, widget_group, namespace):
    """A widget w-1 in ``namespace`` (of ``widget_group``); returns (group, path of w-1)."""
    from tests.resources.test_crd import create_object
    path = "/apis/%s/v1/namespaces/%s/widgets" % (widget_group, namespace)
    create_object(cluster, path, {"apiVersion": widget_group + "/v1", "kind": "Widget",
                                  "metadata": {"name": "w-1"}, "spec": {"replicas": 1}})
    return widget_group, path + "/w-1"
