"""One gateway in front of a fleet (issue #39): the package's cluster, whose API server trusts
the provider ("trusting", forward mode), and the session's cluster, which does not ("plain",
--cluster-auth plain=impersonate). On "plain" the gateway's own account holds exactly the
rights of conf/kubernetes/rbac.yaml and impersonation.yaml, applied as they are; the people
are the provider's, their groups bound there with the gateway's --oidc-groups-prefix.

A person signs in once with the provider, over plain HTTP (person.py) or in Chromium, and uses
both clusters: the other cluster's UI gets its token from the gateway's session, never from
another trip to the provider. On "plain" they see their team's namespace and get the cluster's
own 403, naming them, elsewhere; lists (the watch cache's authorization included), a write
read back from the cluster, a terminal, the audit trail. The refusals: no token, a client's own
Impersonate-* headers, forged and altered ID tokens; the cluster's own tokens are forwarded as
they are and judged there; a pasted token never reaches the other cluster; signing out at one
cluster ends the session at both. The stand-in web UI (page/) is served by the fleet's
gateway (--web-root), the home page by a second one."""

import base64
import json
import os
import time

import pytest
import yaml

from tests.cluster import users
from tests.oidc.conftest import FLEET, FLEET_HOME, authenticator_ready
from tests.oidc.person import Person
from tests.support import oidc as fake_oidc
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for
from tests.terminal.conftest import CONTAINER, create_pods
from tests.terminal.jsclient import new_session, sockjs_url

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GROUPS_PREFIX = "idp:"
POD = "shell"
RBAC_PATHS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    "Role": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "RoleBinding": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
}


def manifests(*names):
    docs = []
    for name in names:
        with open(os.path.join(ROOT, "conf", "kubernetes", name)) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def apply_gateway_rbac(cluster):
    """conf/kubernetes/rbac.yaml and impersonation.yaml as they are; returns what to delete
    and the account's token."""
    status, _ = cluster.request("POST", "/api/v1/namespaces",
                                {"metadata": {"name": "kubernetes-dashboard"}})
    assert status in (201, 409)
    created = []
    for doc in manifests("rbac.yaml", "impersonation.yaml"):
        path = RBAC_PATHS[doc["kind"]].format(ns=doc["metadata"].get("namespace"))
        status, reply = cluster.request("POST", path, doc)
        assert status in (201, 409), (doc["kind"], reply)
        if status == 201:
            created.append(path + "/" + doc["metadata"]["name"])
    return created, cluster.service_account_token("kubernetes-dashboard", "dashboard-api")


class Fleet:
    """``gw`` (the gateway), ``provider``, ``trusting`` and ``plain`` (the clusters),
    ``teams`` {login: namespace on plain}, ``url``."""

    def person(self, login):
        return Person(self.provider, login)


@pytest.fixture(scope="module")
def fleet(oidc_base, cluster, tmp_path_factory):
    base = oidc_base
    created, token = apply_gateway_rbac(cluster)
    teams = {"alice": cluster.new_namespace("fleet-a"), "bob": cluster.new_namespace("fleet-b")}
    groups = {"alice": "oidc-team-a", "bob": "oidc-team-b"}
    for login, namespace in teams.items():
        cluster.request("POST", "/api/v1/namespaces/%s/configmaps" % namespace,
                        {"metadata": {"name": namespace + "-settings"}, "data": {"k": "v"}})
        cluster.request(
            "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % namespace,
            {"metadata": {"name": "team-edit"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "edit"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                           "name": GROUPS_PREFIX + groups[login]}]})
    create_pods(cluster, teams["alice"], {POD: "nginx:1.19"})
    kubeconfig = str(tmp_path_factory.mktemp("fleet") / "kubeconfig")
    users.write_contexts(kubeconfig, {
        "trusting": (base.cluster.url, base.cluster.ca_file, "admin", base.cluster.admin_token),
        "plain": (cluster.url, cluster.ca_file, "dashboard-api", token)}, "trusting")
    fleet = Fleet()
    fleet.provider, fleet.trusting, fleet.plain, fleet.teams = base.provider, base.cluster, \
        cluster, teams
    fleet.url, fleet.home_url = base.url(FLEET), base.url(FLEET_HOME)
    flags = ["--kubeconfig", kubeconfig, "--cluster-auth", "plain=impersonate",
             "--oidc-groups-prefix", GROUPS_PREFIX] + base.flags()
    gw = home = None
    try:
        gw = Gateway.start(None, "--web-root", base.web_root,
                           "--oidc-redirect-url", fleet.url + "/oidc/callback", *flags,
                           port=base.ports[FLEET], kubeconfig=False)
        home = Gateway.start(None, "--oidc-redirect-url", fleet.home_url + "/oidc/callback",
                             *flags, port=base.ports[FLEET_HOME], kubeconfig=False)
        authenticator_ready(base)
        fleet.gw, fleet.home = gw, home
        yield fleet
    finally:
        for started in (gw, home):
            if started is not None:
                started.stop()
        for namespace in teams.values():
            cluster.request("DELETE", "/api/v1/namespaces/" + namespace)
        for path in reversed(created):
            cluster.request("DELETE", path)


def signed_in(fleet, login, cluster="plain", start="/clusters/trusting/oidc/login"):
    """(person, a function giving a fresh ID token of theirs at ``cluster``'s UI): signed in
    once at ``start``, the cluster's UI takes its token from the gateway's session (its
    oidc/refresh). The ID token lives 12 s: each use takes one refreshed if the last is older
    than a few seconds."""
    person = fleet.person(login)
    person.sign_in(fleet.url + start)
    base = "/clusters/%s/" % cluster
    got = {"at": None}

    def token():
        if got["at"] is None or time.monotonic() - got["at"] > 4:
            assert person.post(fleet.url + base + "oidc/refresh").status_code == 200
            got["at"] = time.monotonic()
        value = person.cookie("token", fleet.url + base)
        assert value, "no token cookie at " + base
        return value
    return person, token


def names(reply):
    return sorted(i["objectMeta"]["name"] for i in reply.json().get("items") or ()
                  if i["objectMeta"]["name"] != "kube-root-ca.crt")


def listed(gw, path, token, want):
    """Waits until the list at ``path`` answers 200 with ``want`` among its names (the
    cluster's watch cache starts on first use)."""
    def seen():
        reply = gw.get(path, token=token())
        assert reply.status in (200, 503), reply
        return reply if reply.status == 200 and want in names(reply) else None
    return wait_for(seen, timeout=30, interval=0.3, what="%s listing %s" % (path, want))


def test_a_person_on_a_cluster_that_does_not_trust_the_provider(fleet):
    gw, a, b = fleet.gw, fleet.teams["alice"], fleet.teams["bob"]
    _alice, token = signed_in(fleet, "alice")
    plain = gw.at("/clusters/plain")
    me = plain.get("/api/v1/me", token=token())
    assert me.status == 200 and me.json() == {"name": "alice@example.com",
                                              "authenticated": True}
    # Lists from the watch cache, authorized by the cluster for the impersonated person.
    listed(plain, "/api/v1/configmap/" + a, token, a + "-settings")
    listed(plain, "/api/v1/pod/" + a, token, POD)
    refused = plain.get("/api/v1/configmap/" + b, token=token())
    assert refused.status == 403, refused
    assert refused.json()["message"] == (
        'configmaps is forbidden: User "alice@example.com" cannot list resource "configmaps" '
        'in API group "" in the namespace "%s"' % b)
    assert plain.get("/api/v1/pod/%s/%s" % (b, POD), token=token()).status == 403
    # The same ID token on the cluster that trusts the provider, forwarded as it is.
    trusting = gw.at("/clusters/trusting")
    assert trusting.get("/api/v1/me", token=token()).json()["name"] == "alice@example.com"
    listed(trusting, "/api/v1/configmap/oidc-a", token, "oidc-a-settings")
    assert trusting.get("/api/v1/configmap/oidc-b", token=token()).status == 403


def test_a_write_as_the_person_read_back_from_the_cluster(fleet):
    gw, a = fleet.gw.at("/clusters/plain"), fleet.teams["alice"]
    _alice, token = signed_in(fleet, "alice")
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "written", "namespace": a}, "data": {"by": "alice"}}
    reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/written" % a,
                       token=token(), body=body)
    assert reply.status in (200, 201, 204), reply
    status, stored = fleet.plain.request("GET", "/api/v1/namespaces/%s/configmaps/written" % a)
    assert status == 200 and stored["data"] == {"by": "alice"}
    # The audit trail names the person the gateway verified, and she may read it there.
    rid = reply.headers["X-Request-Id"]

    def entry():
        got = gw.get("/api/v1/audit", token=token(), params={"namespace": a}).json()
        return [e for e in got["entries"] if e["requestId"] == rid] or None
    [made] = wait_for(entry, timeout=10, what="the audit entry")
    assert (made["user"], made["userVerified"], made["userSource"], made["cluster"]) == (
        "alice@example.com", True, "oidc", "plain")
    # Elsewhere the cluster refuses the person, and nothing is written.
    b = fleet.teams["bob"]
    body["metadata"]["namespace"] = b
    reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/written" % b,
                       token=token(), body=body)
    assert reply.status == 403 and 'User "alice@example.com"' in reply.json()["message"]
    assert fleet.plain.request("GET", "/api/v1/namespaces/%s/configmaps/written" % b)[0] == 404


def test_a_terminal_as_the_person(fleet, js):
    gw, a = fleet.gw.at("/clusters/plain"), fleet.teams["alice"]
    _alice, token = signed_in(fleet, "alice")
    session_id = new_session(gw, token(), a, POD, CONTAINER)
    js.open("t", sockjs_url(gw, session_id), bind=session_id)
    js.stdin("t", "echo as-$((40+2))\r")
    js.wait_output("t", "as-42")
    js.stdin("t", "exit\r")
    assert js.wait_closed("t") == (1, "Process exited")
    # The session is in the audit trail, naming her as the gateway verified her.

    def recorded():
        got = gw.get("/api/v1/audit", token=token(), params={"namespace": a, "kind": "pod"})
        mine = [e for e in got.json()["entries"] if e["route"] == "terminal"]
        return mine if len(mine) == 2 else None
    for entry in wait_for(recorded, timeout=10, what="the terminal's audit entries"):
        assert (entry["user"], entry["userSource"], entry["name"]) == (
            "alice@example.com", "oidc", POD), entry
    # Her logs, read as her through the gateway's credentials.
    log = gw.get("/api/v1/log/%s/%s" % (a, POD), token=token())
    assert log.status == 200 and log.json()["info"]["podName"] == POD, log
    # Bob may not exec in alice's namespace: the cluster's own 403, naming him.
    _bob, bob_token = signed_in(fleet, "bob")
    refused = gw.get("/api/v1/pod/%s/%s/shell/%s" % (a, POD, CONTAINER), token=bob_token())
    assert refused.status == 403 and 'User "bob@example.com"' in refused.json()["message"]


def forged(issuer, **claims):
    """An ID token naming the provider, signed by a key of our own."""
    key = fake_oidc.RsaKey("forger")
    return fake_oidc.token(key, fake_oidc.claims(iss=issuer, aud="dashboard",
                                                 email="alice@example.com", **claims))


def altered(token, **changes):
    """``token`` with claims changed and its signature kept."""
    head, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    return ".".join((head, fake_oidc.b64(json.dumps(claims).encode()), signature))


def test_refusals_and_the_clusters_own_tokens(fleet):
    gw, a, b = fleet.gw.at("/clusters/plain"), fleet.teams["alice"], fleet.teams["bob"]
    _alice, token = signed_in(fleet, "alice")
    path = "/api/v1/configmap/" + a
    # No verified person: the 401, never the gateway's rights.
    assert gw.get(path).status == 401
    # A client's own impersonation would borrow the gateway's right to impersonate.
    for bearer in (token(), fleet.plain.admin_token):
        reply = gw.get(path, token=bearer, headers={"Impersonate-User": "admin",
                                                     "Impersonate-Group": "system:masters"})
        assert reply.status == 403 and "Impersonate-* headers are refused" in \
            reply.json()["message"], reply
    # Forged, altered (another audience, a later expiry): the gateway's 401.
    issuer = fleet.provider.issuer
    for bad in (forged(issuer), altered(token(), aud="another-client"),
                altered(token(), exp=int(time.time()) + 86400)):
        reply = gw.get(path, token=bad)
        assert reply.status == 401, reply
        assert "the ID token is refused" in reply.json()["message"]
    # The cluster's own tokens go as they are, and the cluster judges them.
    assert gw.get("/api/v1/configmap/" + b, token=fleet.plain.admin_token).status == 200
    nobody = gw.get("/api/v1/configmap/" + b, token=fleet.plain.norights_token)
    assert nobody.status == 403 and 'User "nobody"' in nobody.json()["message"]
    # Another person of another team: the other namespace only.
    _bob, bob_token = signed_in(fleet, "bob")
    listed(gw, "/api/v1/configmap/" + b, bob_token, b + "-settings")
    assert gw.get(path, token=bob_token()).status == 403


def test_one_sign_in_for_every_clusters_web_ui(fleet):
    person = fleet.person("alice")
    person.sign_in(fleet.url + "/clusters/trusting/oidc/login")
    # The other cluster's UI: its index goes through its refresh, which sets its token from
    # the gateway's session; the person never sees the provider again.
    page = person.get(fleet.url + "/clusters/plain/")
    assert page.status_code == 200 and page.url == fleet.url + "/clusters/plain/"
    assert not [r.url for r in page.history if r.url.startswith(fleet.provider.issuer)]
    token = person.cookie("token", fleet.url + "/clusters/plain/")
    assert token and person.cookie("token", fleet.url + "/clusters/trusting/")
    listed = fleet.gw.get("/clusters/plain/api/v1/clusters", token=token).json()["clusters"]
    assert {c["name"]: (c["authMode"], c["usable"]) for c in listed} == {
        "trusting": ("forward", True), "plain": ("impersonate", True)}
    # Signed out at one cluster: every UI's token and the session are gone.
    person.get(fleet.url + "/clusters/plain/oidc/logout")
    for path in ("/clusters/plain/", "/clusters/trusting/", "/"):
        assert person.cookie("token", fleet.url + path) is None, path
    assert person.post(fleet.url + "/clusters/trusting/oidc/refresh").status_code == 401


def test_a_pasted_token_never_reaches_the_other_cluster(fleet):
    stranger = fleet.person("nobody")
    stranger.session.cookies.set("token", fleet.plain.admin_token, domain="127.0.0.1",
                                 path="/clusters/plain")
    reply = fleet.gw.get("/clusters/plain/api/v1/clusters", token=fleet.plain.admin_token)
    usable = {c["name"]: c["usable"] for c in reply.json()["clusters"]}
    assert usable == {"plain": True, "trusting": None}   # never sent there to find out
    # The other cluster's UI has no token: its refresh finds no session, and the person is
    # sent to sign in with the provider.
    page = stranger.get(fleet.url + "/clusters/trusting/")
    assert page.url.startswith(fleet.provider.issuer + "/interaction/"), page.url


def test_the_home_page_signed_in_once_at_every_cluster(fleet, browser):
    context = browser.new_context(ignore_https_errors=True)   # the provider's test CA
    try:
        page = context.new_page()
        page.goto(fleet.home_url + "/clusters/trusting/")
        page.click("#oidc-signin a")
        page.wait_for_url(fleet.provider.issuer + "/interaction/**")
        page.fill("input[name=login]", "alice")
        page.fill("input[name=password]", "any password")
        page.click("button[type=submit]")
        page.wait_for_load_state()
        if page.url.startswith(fleet.provider.issuer):  # the provider's consent page
            page.click("button[type=submit]")
        page.wait_for_url(fleet.home_url + "/clusters/trusting/**", timeout=15000)
        page.wait_for_selector("#overview:not([hidden])", timeout=15000)
        # The other cluster's home page is signed in without the provider.
        page.goto(fleet.home_url + "/clusters/plain/")
        page.wait_for_selector("#overview:not([hidden])", timeout=15000)
        assert page.url.startswith(fleet.home_url + "/clusters/plain/")
        page.fill("#namespace-name", fleet.teams["alice"])
        page.click("#namespace-form button")
        page.wait_for_selector('#pods tr[data-pod="%s"]' % POD, timeout=15000)
    finally:
        context.close()
