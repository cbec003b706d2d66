"""Data that says how old it is (issue #40, part 3 of its text): while the API server does not
answer, lists keep answering from the watch cache to the people it has already authorized,
with what they were allowed to see (RBAC cannot change while the API server is away), and the
system banner says since when the cluster has not answered; a token never seen gets a 503 that
says the cluster is unreachable, and an ID token past its expiry is refused. Once the API server
answers again, the configured banner is back."""

import time

import pytest

from tests.faults.conftest import FLAGS
from tests.gateway.helpers import assert_error
from tests.resources import kube
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for

BANNER = "Maintenance on Friday"
READ_CONFIGMAPS = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]


@pytest.fixture
def banner_gateway(cluster, proxy):
    """The faults suite's gateway (through ``proxy``, access answers kept 1 s) with a banner."""
    gw = Gateway.start(cluster, *FLAGS, "--system-banner", BANNER,
                       "--system-banner-severity", "INFO", apiserver=proxy.url)
    try:
        gw.wait_cache_synced()
        wait_for(lambda: gw.get("/readyz").status == 200, timeout=30,
                 what="the gateway through the proxy to be ready")
        yield gw
    finally:
        gw.stop()


def banner(gw, token=None, cookie=None):
    headers = {"Cookie": "token=" + cookie} if cookie else None
    reply = gw.get("/api/v1/systembanner", token=token, headers=headers)
    assert reply.status == 200, reply
    return reply.json()


def test_an_outage_keeps_authorized_callers_answered_and_says_so(
        cluster, proxy, banner_gateway, namespace, admin_token, norights_token, editor_token):
    gw = banner_gateway
    path = "/api/v1/configmap/" + namespace
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "seen"}, "data": {"k": "v"}})
    reader = kube.grant(cluster, namespace, "reader", READ_CONFIGMAPS)
    kube.create(cluster, "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings"
                % namespace, {
                    "metadata": {"name": "expired-reads"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                "name": "reader"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                  "name": "expired"}]})
    wait_for(lambda: "seen" in kube.names(gw.get(path, token=admin_token).json(), "items"),
             what="the config map in the gateway's cache")
    expired = cluster.expired_token
    wait_for(lambda: gw.get(path, token=expired).status == 200, timeout=30,
             what="the expired-looking token's right")   # the authorizer learns the binding
    before = {}
    for who, token in (("admin", admin_token), ("reader", reader)):
        reply = gw.get(path, token=token)
        assert reply.status == 200, (who, reply)
        before[who] = reply
    refused = assert_error(gw.get(path, token=norights_token), 403, "Forbidden")
    assert banner(gw, admin_token) == {"message": BANNER, "severity": "INFO"}

    proxy.refuse()
    try:
        wait_for(lambda: "has not answered since" in banner(gw, admin_token)["message"],
                 timeout=30, what="the banner to say the cluster does not answer")
        warning = banner(gw, admin_token)
        assert warning["severity"] == "WARNING", warning
        assert "the lists show what was last seen then" in warning["message"], warning
        # The upstream web UI asks with its token cookie; a stranger gets the configured banner.
        assert banner(gw, cookie=reader) == warning
        assert banner(gw) == {"message": BANNER, "severity": "INFO"}
        assert banner(gw, "never-seen-token") == {"message": BANNER, "severity": "INFO"}
        time.sleep(1.5)   # past --access-cache-ttl: the access answers must be asked again

        for who, token in (("admin", admin_token), ("reader", reader)):
            reply = gw.get(path, token=token)
            assert reply.status == 200, (who, reply)
            assert reply.json()["items"] == before[who].json()["items"], who
            assert float(reply.headers["X-Dashboard-Cache-Age"]) > 0, reply.headers
            held = gw.get(path, token=token,
                          headers={"If-None-Match": before[who].headers["ETag"]})
            assert held.status == 304, (who, held)
        # A refusal stays the API server's own.
        assert assert_error(gw.get(path, token=norights_token), 403, "Forbidden") == refused
        # A JWT past its exp: the API server would refuse it, and cannot be asked.
        assert_error(gw.get(path, token=expired), 401, "Unauthorized",
                     message_has=("the token expired at 2001-09-09T",))
        # Credentials never checked: nothing to show, and why.
        assert_error(gw.get(path, token=editor_token), 503, "ServiceUnavailable",
                     message_has=("the cluster is unreachable",
                                  "it has not checked these credentials before"))
        assert gw.get("/healthz").status == 200
    finally:
        proxy.passing()
    wait_for(lambda: banner(gw, admin_token) == {"message": BANNER, "severity": "INFO"},
             timeout=30, what="the configured banner back")
    wait_for(lambda: gw.get(path, token=editor_token).status == 403, timeout=30,
             what="the API server to judge a new token again")


def test_a_hung_api_server_holds_an_authorized_list_once_at_most(cluster, proxy, banner_gateway,
                                                                   namespace, admin_token):
    """A hang: the first review after the access answers expired waits for its deadline, then
    the last answer serves; the next lists are answered from memory (one review at a time
    goes out to find out whether the API server is back). (A hung API server's watches are
    cut after --watch-idle-timeout, and the banner then says so as for a refused one.)"""
    gw = banner_gateway
    path = "/api/v1/configmap/" + namespace
    assert gw.get(path, token=admin_token).status == 200
    proxy.hang()
    try:
        time.sleep(1.5)   # past --access-cache-ttl
        answers = [gw.get(path, token=admin_token) for _ in range(5)]
        assert [a.status for a in answers] == [200] * 5, answers
        assert float(answers[-1].headers["X-Dashboard-Cache-Age"]) >= 0.0
    finally:
        proxy.passing()
    wait_for(lambda: gw.get(path, token=admin_token).status == 200, timeout=30,
             what="the lists after the hang")
