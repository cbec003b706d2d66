"""Global settings and pinned resources in the settings ConfigMap; /settings/cani."""

import json

import pytest

from dashboard_api.web import settings as websettings
from tests.gateway.helpers import assert_error

CM = "kubernetes-dashboard-settings"


@pytest.fixture
def web(start_gateway, namespace):
    """A gateway keeping its settings in a fresh namespace."""
    gw = start_gateway("--namespace", namespace)
    gw.namespace = namespace
    return gw


def stored(cluster, namespace):
    status, cm = cluster.request("GET", "/api/v1/namespaces/%s/configmaps/%s" % (namespace, CM))
    return cm.get("data", {}) if status == 200 else None


@pytest.mark.parametrize("path", ["/settings", "/api/v1/settings/global"])
def test_defaults_without_a_configmap_and_without_a_token(web, path):
    reply = web.get(path)
    assert reply.status == 200 and reply.json() == websettings.DEFAULTS
    assert web.get("/settings/pinnedresources").json() == []


def test_settings_round_trip(web, cluster, admin_token):
    wanted = dict(websettings.DEFAULTS, clusterName="lab", itemsPerPage=50,
                  resourceAutoRefreshTimeInterval=0, namespaceFallbackList=["a", "b"],
                  hideAllNamespaces=True)
    reply = web.request("PUT", "/api/v1/settings/global", token=admin_token, body=wanted)
    assert reply.status == 204 and reply.data == b""
    assert json.loads(stored(cluster, web.namespace)["settings"]) == wanted
    assert web.get("/settings").json() == wanted
    assert web.get("/api/v1/settings/global").json() == wanted
    # Partial bodies take defaults for what they leave out; the unprefixed path writes too.
    assert web.request("PUT", "/settings", token=admin_token,
                       body={"itemsPerPage": 25}).status == 204
    assert web.get("/settings").json() == dict(websettings.DEFAULTS, itemsPerPage=25)


def test_settings_write_refusals(web, cluster, admin_token, norights_token, editor_token):
    assert_error(web.request("PUT", "/settings", body={"itemsPerPage": 5}), 401, "Unauthorized")
    assert_error(web.request("PUT", "/settings", token="wrong", body={}), 401, "Unauthorized")
    assert_error(web.request("PUT", "/settings", token=norights_token, body={}), 403,
                 "Forbidden", ['User "nobody"', web.namespace])
    # The editor may edit in team-a only.
    assert_error(web.request("PUT", "/settings", token=editor_token, body={}), 403,
                 "Forbidden", ['User "editor"'])
    assert_error(web.request("PUT", "/settings", token=admin_token, body={"itemsPerPage": "x"}),
                 400, "BadRequest", ["itemsPerPage"])
    assert_error(web.request("PUT", "/settings", token=admin_token, body=[1]), 400)
    assert_error(web.request("PUT", "/settings", token=admin_token, raw_body=b"{",
                             headers={"Content-Type": "application/json"}), 400)
    assert stored(cluster, web.namespace) is None  # nothing was written


def test_concurrent_change_is_refused_until_reloaded(web, cluster, admin_token):
    assert web.request("PUT", "/settings", token=admin_token,
                       body={"clusterName": "one"}).status == 204
    path = "/api/v1/namespaces/%s/configmaps/%s" % (web.namespace, CM)
    status, _ = cluster.request("PATCH", path, {"data": {"settings": '{"clusterName": "two"}'}})
    assert status == 200
    reply = web.request("PUT", "/settings", token=admin_token, body={"clusterName": "three"})
    assert_error(reply, 409, "Conflict", ["settings changed since last reload"])
    assert json.loads(stored(cluster, web.namespace)["settings"]) == {"clusterName": "two"}
    assert web.get("/settings").json()["clusterName"] == "two"
    assert web.request("PUT", "/settings", token=admin_token,
                       body={"clusterName": "three"}).status == 204
    assert web.get("/settings").json()["clusterName"] == "three"


def test_pinned_resources(web, cluster, admin_token, norights_token):
    pod = {"kind": "pod", "name": "web-1", "namespace": "team-a", "namespaced": True,
           "displayName": "Pod"}
    node = {"kind": "node", "name": "sim-node-1", "namespaced": False, "displayName": "Node"}
    for item in (pod, node, dict(pod)):
        reply = web.request("PUT", "/settings/pinnedresources", token=admin_token, body=item)
        assert reply.status == 204
    assert web.get("/settings/pinnedresources").json() == [pod, node]
    assert json.loads(stored(cluster, web.namespace)["pinnedResources"]) == [pod, node]

    assert_error(web.request("PUT", "/settings/pinnedresources", body=pod), 401)
    assert_error(web.request("PUT", "/settings/pinnedresources", token=admin_token,
                             body={"kind": "pod"}), 400, "BadRequest", ["name"])
    assert_error(web.request("DELETE", "/settings/pinnedresources/pod/team-a/web-1",
                             token=norights_token), 403, "Forbidden", ['User "nobody"'])
    assert_error(web.request("DELETE", "/settings/pinnedresources/pod/team-a/web-1"), 401)

    assert web.request("DELETE", "/settings/pinnedresources/pod/team-a/web-1",
                       token=admin_token).status == 204
    assert_error(web.request("DELETE", "/settings/pinnedresources/pod/team-a/web-1",
                             token=admin_token), 404, "NotFound", ["pinned resource not found"])
    assert web.request("DELETE", "/settings/pinnedresources/node/sim-node-1",
                       token=admin_token).status == 204
    assert web.get("/settings/pinnedresources").json() == []


@pytest.mark.parametrize("path", ["/settings/cani", "/settings/pinnedresources/cani"])
def test_cani(web, admin_token, norights_token, path):
    assert web.get(path).json() == {"allowed": False}
    assert web.get(path, token="wrong").json() == {"allowed": False}
    assert web.get(path, token=norights_token).json() == {"allowed": False}
    assert web.get(path, token=admin_token).json() == {"allowed": True}


def test_proxy_mode_reads_with_the_callers_token(start_gateway, namespace, admin_token,
                                                 norights_token):
    gw = start_gateway("--proxy", "--namespace", namespace, kubeconfig=False)
    assert gw.request("PUT", "/settings", token=admin_token,
                      body={"clusterName": "proxied"}).status == 204
    assert gw.get("/settings").json() == websettings.DEFAULTS
    assert gw.get("/settings", token=norights_token).json() == websettings.DEFAULTS
    assert gw.get("/settings", token=admin_token).json()["clusterName"] == "proxied"
