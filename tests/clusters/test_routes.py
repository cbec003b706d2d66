"""Every feature suite's smoke test on each cluster's path, and the default cluster's at the
root: lists, a detail, writes read back from that cluster's own API server, logs, settings,
/config, CSRF and sign-in, a terminal over SockJS, the metrics integration."""

import json
import secrets

import pytest

from tests.clusters.conftest import CONFIGMAP, CONTAINER, DEPLOYMENT, POD
from tests.gateway.helpers import assert_error
from tests.gateway.test_integrations import proxy_calls
from tests.support.waiting import wait_for
from tests.terminal.jsclient import new_session, sockjs_url

UNAUTHORIZED = {"status": "Failure", "message": "Unauthorized", "reason": "Unauthorized",
                "code": 401}


def names(items):
    return {item["objectMeta"]["name"] for item in items}


@pytest.fixture(params=["alpha", "beta", "root"])
def where(request, two_clusters, alpha, beta):
    """(the gateway under a cluster's path, that cluster's Seeded, the other's)."""
    if request.param == "root":
        return two_clusters, alpha, beta
    seeded, other = (alpha, beta) if request.param == "alpha" else (beta, alpha)
    return two_clusters.at("/clusters/" + seeded.name), seeded, other


def listed(gw, seeded, path, key, wanted):
    """The items of a list (from the cluster's watch cache, so awaited) once ``wanted``
    (a predicate on the names) holds."""
    def answer():
        reply = gw.get(path, token=seeded.token)
        assert reply.status == 200, (path, reply)
        items = reply.json()[key]
        return items if wanted(names(items)) else None
    return wait_for(answer, timeout=20, what="%s listing what it should" % path)


def test_unknown_cluster_is_a_json_404(two_clusters, alpha):
    for path in ("/clusters/nope/api/v1/namespace", "/clusters/nope/config",
                 "/clusters/nope/api/v1/csrftoken/login", "/clusters/nope/api/sockjs/info",
                 "/clusters/nope/", "/clusters/nope", "/clusters/nope/settings/global",
                 "/clusters/nope/api/v1/clusters"):
        assert_error(two_clusters.get(path, token=alpha.token), 404)


def test_each_cluster_answers_its_own_objects(two_clusters, alpha, beta):
    for seeded, other in ((alpha, beta), (beta, alpha)):
        mine = two_clusters.at("/clusters/" + seeded.name)
        theirs = two_clusters.at("/clusters/" + other.name)
        ns = seeded.namespace
        reply = mine.get("/api/v1/namespace/" + ns, token=seeded.token)
        assert reply.status == 200 and reply.json()["objectMeta"]["name"] == ns, reply
        found = listed(mine, seeded, "/api/v1/namespace?filterBy=name," + ns, "namespaces",
                       lambda got: ns in got)
        assert names(found) == {ns}
        assert_error(theirs.get("/api/v1/namespace/" + ns, token=other.token), 404)
        assert theirs.get("/api/v1/namespace?filterBy=name," + ns,
                          token=other.token).json()["namespaces"] == []
        assert_error(theirs.get("/api/v1/configmap/%s/%s" % (ns, CONFIGMAP),
                                token=other.token), 404)
    # The root is the default cluster, alpha: its objects, never beta's.
    assert two_clusters.get("/api/v1/namespace/" + alpha.namespace,
                            token=alpha.token).status == 200
    assert_error(two_clusters.get("/api/v1/namespace/" + beta.namespace, token=alpha.token),
                 404)


def test_lists_and_a_detail(where):
    gw, seeded, _ = where
    ns = seeded.namespace
    listed(gw, seeded, "/api/v1/pod/" + ns, "pods",
           lambda got: POD in got and any(n.startswith(DEPLOYMENT + "-") for n in got))
    assert names(listed(gw, seeded, "/api/v1/deployment/" + ns, "deployments",
                        lambda got: DEPLOYMENT in got)) == {DEPLOYMENT}
    listed(gw, seeded, "/api/v1/configmap/" + ns, "items", lambda got: CONFIGMAP in got)
    events = listed(gw, seeded, "/api/v1/event/" + ns, "events",
                    lambda got: "seeded-" + seeded.name in got)
    assert [e["reason"] for e in events if e["objectMeta"]["name"] == "seeded-" + seeded.name] \
        == ["Seeded" + seeded.name.capitalize()]
    nodes = gw.get("/api/v1/node", token=seeded.token)
    assert nodes.status == 200 and nodes.json()["listMeta"]["totalItems"] == seeded.nodes, nodes
    detail = gw.get("/api/v1/configmap/%s/%s" % (ns, CONFIGMAP), token=seeded.token)
    assert detail.status == 200 and detail.json()["data"] == {"cluster": seeded.name}, detail


def test_search_finds_that_clusters_objects_only(where):
    """GET /api/v1/search under a cluster's path searches that cluster's cache (issue #38)."""
    gw, seeded, other = where

    def searched(q):
        reply = gw.get("/api/v1/search", token=seeded.token, params={"q": q})
        assert reply.status == 200, (q, reply)
        return [(i["kind"], i["objectMeta"]["name"]) for i in reply.json()["items"]]
    wait_for(lambda: searched("%s ns:%s" % (CONFIGMAP, seeded.namespace)) == [
        ("configmap", CONFIGMAP)] or None, timeout=20, what="the search finding the config map")
    assert searched("%s ns:%s" % (CONFIGMAP, other.namespace)) == []
    assert ("namespace", seeded.namespace) in searched(seeded.namespace)
    assert ("namespace", other.namespace) not in searched(other.namespace)


def test_writes_reach_that_cluster_only(where):
    gw, seeded, other = where
    # A PUT: scaling the cluster's own deployment.
    reply = gw.request("PUT", "/api/v1/scale/deployment/%s/%s" % (seeded.namespace, DEPLOYMENT),
                       token=seeded.token, params={"scaleBy": 2})
    assert reply.status == 200 and reply.json()["desiredReplicas"] == 2, reply
    status, dep = seeded.cluster.request(
        "GET", "/apis/apps/v1/namespaces/%s/deployments/%s" % (seeded.namespace, DEPLOYMENT))
    assert status == 200 and dep["spec"]["replicas"] == 2
    # A POST with its CSRF token from the same path: a namespace made on that cluster only.
    name = "made-%s-%s" % (seeded.name, secrets.token_hex(3))
    try:
        reply = gw.request("POST", "/api/v1/namespace", token=seeded.token, body={"name": name},
                           csrf="namespace")
        assert reply.status == 201 and reply.json() == {"name": name}, reply
        assert seeded.cluster.request("GET", "/api/v1/namespaces/" + name)[0] == 200
        assert other.cluster.request("GET", "/api/v1/namespaces/" + name)[0] == 404
    finally:
        seeded.cluster.request("DELETE", "/api/v1/namespaces/" + name)


def test_logs(where):
    gw, seeded, _ = where
    reply = gw.get("/api/v1/log/%s/%s/%s" % (seeded.namespace, POD, CONTAINER),
                   token=seeded.token)
    assert reply.status == 200, reply
    body = reply.json()
    assert body["info"]["podName"] == POD and body["info"]["containerName"] == CONTAINER
    assert body["logs"] and body["logs"][0].startswith("starting container " + CONTAINER)
    reply = gw.get("/api/v1/log/file/%s/%s/%s" % (seeded.namespace, POD, CONTAINER),
                   token=seeded.token)
    assert reply.status == 200 and reply.data.startswith(b"starting container"), reply


def test_config_csrf_and_sign_in(where):
    gw, seeded, other = where
    config = gw.get("/config")
    assert config.status == 200 and config.json()["authenticationMode"] == "token", config
    reply = gw.request("POST", "/api/v1/login", body={"token": seeded.token}, csrf="login")
    assert reply.status == 200 and reply.json() == {"token": seeded.token}, reply
    # Signing in checks the token with that cluster: the other cluster's is not valid here.
    reply = gw.request("POST", "/api/v1/login", body={"token": other.token}, csrf="login")
    assert reply.json() == UNAUTHORIZED, reply


def test_metrics_integration_answers_per_cluster(where):
    gw, seeded, _ = where
    reply = gw.get("/api/v1/integration/sidecar/health", token=seeded.token)
    # No sidecar runs in these clusters: the health record, whatever it says.
    assert reply.status in (200, 503), reply
    body = reply.json()
    assert body["healthy"] is (reply.status == 200) and body["message"], reply
    # Checked through that cluster's own API server (its service proxy; no --sidecar-host).
    assert proxy_calls(seeded.cluster) > 0


def test_settings_are_each_clusters_own(two_clusters, alpha, beta, settings_namespace):
    for seeded in (alpha, beta):
        gw = two_clusters.at("/clusters/" + seeded.name)
        current = gw.get("/api/v1/settings/global").json()
        wanted = dict(current, clusterName="lab-" + seeded.name)
        reply = gw.request("PUT", "/api/v1/settings/global", token=seeded.token, body=wanted)
        assert reply.status == 204, reply
        status, cm = seeded.cluster.request(
            "GET", "/api/v1/namespaces/%s/configmaps/kubernetes-dashboard-settings"
            % settings_namespace)
        assert status == 200 and json.loads(cm["data"]["settings"])["clusterName"] == \
            "lab-" + seeded.name
    for seeded in (alpha, beta):
        got = two_clusters.get("/clusters/%s/api/v1/settings/global" % seeded.name).json()
        assert got["clusterName"] == "lab-" + seeded.name, got
        also = two_clusters.get("/clusters/%s/settings" % seeded.name).json()
        assert also["clusterName"] == "lab-" + seeded.name, also
    assert two_clusters.get("/api/v1/settings/global").json()["clusterName"] == "lab-alpha"


@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_a_terminal_on_each_cluster(js, two_clusters, alpha, beta, name):
    seeded = alpha if name == "alpha" else beta
    gw = two_clusters.at("/clusters/" + name)
    session_id = new_session(gw, seeded.token, seeded.namespace, POD, CONTAINER)
    conn = js.open("t", sockjs_url(gw, session_id), bind=session_id)
    js.stdin("t", "echo on-$((40+2))-%s\r" % name)
    js.wait_output("t", "on-42-" + name)
    assert conn.closed is None
    js.stdin("t", "exit\r")
    assert js.wait_closed("t") == (1, "Process exited")
