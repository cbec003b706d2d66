"""Read your own writes: a list right after a write through the gateway shows it (the watch
cache has applied the write's event before the write answers; dashboard_api/cache/applied.py).

tests/passthrough runs the same checks on a gateway without the cache.
"""

import pytest

from tests.faults.proxy import FaultProxy
from tests.support.gateway import Gateway

ROUNDS = 4


def names(gateway, token, kind, ns):
    reply = gateway.get("/api/v1/%s/%s" % (kind, ns), token=token)
    assert reply.status == 200, reply
    return {i["objectMeta"]["name"]: i for i in reply.json()["items"]}


def no_lag(reply):
    assert reply.status < 300, reply
    assert "Warning" not in reply.headers, reply.headers
    return reply


def raw(gateway, token, method, kind, ns, name, body=None, params=None):
    return gateway.request(method, "/api/v1/_raw/%s/namespace/%s/name/%s" % (kind, ns, name),
                           token=token, body=body, params=params)


def configmap(ns, name, value):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns}, "data": {"v": value}}


@pytest.fixture
def synced(gateway):
    if "--watch-cache=false" not in gateway.proc.args:
        gateway.wait_cache_synced()
    return gateway


def test_create_update_and_delete_then_list(synced, namespace, admin_token):
    gateway, ns = synced, namespace
    for i in range(ROUNDS):
        name = "cm-%d" % i
        no_lag(raw(gateway, admin_token, "PUT", "configmap", ns, name, configmap(ns, name, "a")))
        assert name in names(gateway, admin_token, "configmap", ns)
        no_lag(raw(gateway, admin_token, "PUT", "configmap", ns, name,
                   configmap(ns, name, "b") | {"metadata": {"name": name,
                                                            "labels": {"round": str(i)}}}))
        assert names(gateway, admin_token, "configmap", ns)[name]["objectMeta"]["labels"] == \
            {"round": str(i)}
        no_lag(raw(gateway, admin_token, "DELETE", "configmap", ns, name,
                   params={"propagation": "Background"}))
        assert name not in names(gateway, admin_token, "configmap", ns)


def test_deploy_scale_and_delete_then_list(synced, namespace, admin_token):
    gateway, ns = synced, namespace
    form = {"name": "ryw", "namespace": ns, "containerImage": "nginx:1.19", "replicas": 1,
            "portMappings": [{"port": 80, "targetPort": 80, "protocol": "TCP"}],
            "isExternal": False, "labels": [{"key": "app", "value": "ryw"}]}
    no_lag(gateway.request("POST", "/api/v1/appdeployment", token=admin_token, body=form,
                           csrf="appdeployment"))
    assert "ryw" in names(gateway, admin_token, "deployment", ns)
    assert "ryw" in names(gateway, admin_token, "service", ns)
    for replicas in (3, 0, 2):
        no_lag(gateway.request("PUT", "/api/v1/scale/deployment/%s/ryw" % ns, token=admin_token,
                               params={"scaleBy": replicas}))
        item = names(gateway, admin_token, "deployment", ns)["ryw"]
        assert item["pods"]["desired"] == replicas, item
    no_lag(raw(gateway, admin_token, "DELETE", "deployment", ns, "ryw",
               params={"propagation": "Background"}))
    assert "ryw" not in names(gateway, admin_token, "deployment", ns)


def test_without_the_wait_the_reply_says_lists_may_lag(cluster, namespace, admin_token):
    """The race the wait closes: answered at once (--read-your-writes-timeout=0), a write whose
    event the cache has not applied yet says so in a Warning header. Made certain rather than
    raced: the gateway reaches the API server through a fault proxy whose open connections
    (the watches among them) are then silently dropped, so no event can arrive, while the write
    goes through a new connection."""
    with FaultProxy.in_front_of(cluster.url) as proxy:
        gw = Gateway.start(cluster, "--read-your-writes-timeout=0",
                           "--apiserver-request-timeout=2s", "--watch-idle-timeout=600s",
                           apiserver=proxy.url)
        try:
            gw.wait_cache_synced()
            proxy.drop()
            for attempt in range(3):
                # A pooled connection was dropped too: a write on it gets no answer (504) and
                # the pool is let go, so the next one opens a connection that works.
                name = "lag-%d" % attempt
                reply = raw(gw, admin_token, "PUT", "configmap", namespace, name,
                            configmap(namespace, name, "a"))
                if reply.status != 504:
                    break
            assert reply.status == 204, reply
            status, written = cluster.request("GET", "/api/v1/namespaces/%s/configmaps/%s"
                                              % (namespace, name))
            assert status == 200 and written["data"] == {"v": "a"}, (status, written)
            warnings = reply.headers.getlist("Warning")
            assert warnings and all(
                w.startswith('299 - "written, but lists of configmaps from this gateway may '
                             'not show it yet') for w in warnings), warnings
        finally:
            gw.stop()
