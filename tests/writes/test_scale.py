"""/api/v1/scale/{kind}[/{ns}]/{name}: GET and PUT ?scaleBy through the scale subresource."""

import pytest

from tests.gateway.helpers import assert_error
from tests.resources import kube
from tests.writes.helpers import bad, forbidden, generation, read, unauthorized


@pytest.fixture(scope="module")
def gateway(widget_group, gateway):
    """The writes' gateway, started once the widgets' CRD is established, so that its
    discovery knows the group from its start: the custom objects' scale is this module's
    subject. A group defined after a gateway started, found at discovery's next forced refresh
    (at most every 10 s), is test_raw.py's."""
    return gateway


def scale(gateway, token, kind, ns, name, by=None):
    params = None if by is None else {"scaleBy": by}
    return gateway.request("PUT" if params else "GET", "/api/v1/scale/%s/%s/%s" % (kind, ns, name),
                           token=token, params=params)


def test_deployments_stateful_sets_and_replication_controllers(cluster, gateway, namespace,
                                                               admin_token):
    ns = namespace
    kube.apps(cluster, ns, "deployments", "dep", {"app": "dep"})
    kube.apps(cluster, ns, "statefulsets", "sts", {"app": "sts"}, serviceName="sts")
    kube.replication_controller(cluster, ns, "rc", {"app": "rc"})
    kube.wait_pods(cluster, ns, "app=dep", 1)
    dep_path = "/apis/apps/v1/namespaces/%s/deployments/dep" % ns
    kube.wait_object(cluster, dep_path, lambda d: d["status"].get("replicas") == 1)
    reply = scale(gateway, admin_token, "deployment", ns, "dep")
    assert reply.status == 200 and reply.json() == {"desiredReplicas": 1, "actualReplicas": 1}

    for kind, name, path in (
            ("deployment", "dep", dep_path),
            ("statefulset", "sts", "/apis/apps/v1/namespaces/%s/statefulsets/sts" % ns),
            ("replicationcontroller", "rc", "/api/v1/namespaces/%s/replicationcontrollers/rc"
             % ns)):
        reply = scale(gateway, admin_token, kind, ns, name, by=3)
        assert reply.status == 200, (kind, reply)
        assert reply.json()["desiredReplicas"] == 3, reply
        assert read(cluster, path)["spec"]["replicas"] == 3, kind
    # The controller acts on it.
    kube.wait_object(cluster, dep_path, lambda d: d["status"].get("replicas") == 3,
                     what="three replicas")
    assert scale(gateway, admin_token, "deployment", ns, "dep").json()["actualReplicas"] == 3


def test_custom_objects_with_a_scale_subresource(cluster, gateway, namespace, admin_token,
                                                 widgets):
    group, path = widgets
    kind = "widgets." + group
    reply = cluster.wait_for(lambda: (lambda r: r.status == 200 and r)(
        scale(gateway, admin_token, kind, namespace, "w-1")), timeout=30,
        what="the new CRD served")
    assert reply.json() == {"desiredReplicas": 1, "actualReplicas": 0}
    assert scale(gateway, admin_token, kind, namespace, "w-1", by=4).status == 200
    assert read(cluster, path)["spec"]["replicas"] == 4


def test_bad_input_rights_and_missing_objects_change_nothing(cluster, gateway, namespace,
                                                             admin_token):
    ns = namespace
    kube.apps(cluster, ns, "deployments", "dep", {"app": "dep"})
    path = "/apis/apps/v1/namespaces/%s/deployments/dep" % ns
    before = generation(cluster, path)
    for value, says in (("-1", "at least 0"), ("two", "integer"), ("2.5", "integer"),
                        ("99999999999", "at most")):
        bad(scale(gateway, admin_token, "deployment", ns, "dep", by=value), says)
    bad(gateway.request("PUT", "/api/v1/scale/deployment/%s/dep" % ns, token=admin_token),
        "scaleBy")
    bad(scale(gateway, admin_token, "configmap", ns, "dep", by="2"), "no scale subresource")
    bad(scale(gateway, admin_token, "nosuchkind", ns, "dep", by="2"), "unknown kind")
    bad(scale(gateway, admin_token, "nosuchkind", ns, "dep"), "unknown kind")
    bad(scale(gateway, admin_token, "secret", ns, "dep"), "no scale subresource")
    bad(gateway.get("/api/v1/scale/Deploy_ment/%s/dep" % ns, token=admin_token), "invalid kind")
    bad(gateway.request("PUT", "/api/v1/scale/deployment/dep", token=admin_token,
                        params={"scaleBy": 2}), "namespaced")
    forbidden(scale(gateway, cluster.norights_token, "deployment", ns, "dep", by="2"), "patch",
              "deployments/scale")
    forbidden(scale(gateway, cluster.norights_token, "deployment", ns, "dep"), "get",
              "deployments/scale")
    unauthorized(scale(gateway, None, "deployment", ns, "dep", by="2"))
    assert generation(cluster, path) == before
    assert read(cluster, path)["spec"]["replicas"] == 1
    body = assert_error(scale(gateway, admin_token, "deployment", ns, "nope", by="2"), 404,
                        "NotFound")
    assert '"nope" not found' in body["message"]
