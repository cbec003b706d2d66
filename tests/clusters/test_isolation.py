"""What belongs to one cluster is never honoured by another: a token (the other cluster's API
server refuses it: its 401), a CSRF token, a terminal shell id; and the list of clusters, which
needs a token valid on the cluster of the path it is asked on."""

import secrets

from tests.clusters.conftest import CONTAINER, POD
from tests.gateway.helpers import assert_error, metric_value
from tests.support.waiting import wait_for
from tests.terminal.jsclient import new_session, sockjs_url
from tests.terminal.test_sockjs_endpoint import owner_cookie

UNKNOWN = (2, "unknown or expired terminal session")   # as tests/terminal for a forged id


def refused_logins(seeded):
    """Bearer tokens the cluster's API server has refused (its own /metrics)."""
    status, text = seeded.cluster.request("GET", "/metrics", raw=True)
    assert status == 200
    # 1.20 counts an unknown bearer token as result="error".
    return sum(metric_value(text.decode(), "authentication_attempts", result=result)
               for result in ("error", "failure"))


def test_a_token_of_one_cluster_is_the_other_clusters_401(two_clusters, alpha, beta):
    for seeded, other in ((alpha, beta), (beta, alpha)):
        theirs = two_clusters.at("/clusters/" + other.name)
        # A cached list (the access review asks the other cluster), an uncached list, a
        # detail: each is the other cluster's refusal of this token.
        before = refused_logins(other)
        for path in ("/api/v1/pod/" + other.namespace, "/api/v1/secret/" + other.namespace,
                     "/api/v1/namespace/" + other.namespace):
            assert_error(theirs.get(path, token=seeded.token), 401, "Unauthorized")
            assert theirs.get(path, token=other.token).status == 200, path
        # Refused by that cluster's API server: the token was sent there.
        assert refused_logins(other) > before
    # At the root (alpha): beta's token is alpha's 401.
    assert_error(two_clusters.get("/api/v1/pod/" + alpha.namespace, token=beta.token), 401)


def clusters_listed(gw, token):
    """{name: record} of the list of clusters, once every cluster's version is known (the
    others' come from background probes)."""
    def answer():
        reply = gw.get("/api/v1/clusters", token=token)
        assert reply.status == 200, (gw.url, reply)
        clusters = {c["name"]: c for c in reply.json()["clusters"]}
        return clusters if all(c["version"] for c in clusters.values()) else None
    return wait_for(answer, timeout=15, interval=0.3, what="every cluster's version listed")


def test_the_list_of_clusters(two_clusters, alpha, beta):
    for prefix, seeded in (("", alpha), ("/clusters/alpha", alpha), ("/clusters/beta", beta)):
        gw = two_clusters.at(prefix)
        assert_error(gw.get("/api/v1/clusters"), 401)
        clusters = clusters_listed(gw, seeded.token)
        assert set(clusters) == {"alpha", "beta"}, clusters
        for each in (alpha, beta):
            record = clusters[each.name]
            assert set(record) == {"name", "server", "version", "reachable", "cache", "default",
                                   "path", "authMode", "usable"}, record
            assert record["usable"] is (True if each is seeded else None), record
            assert record["server"] == each.cluster.url, record
            assert record["version"].startswith("v1.20"), record
            assert record["reachable"] is True, record
            assert record["default"] is (each is alpha), record
            assert record["path"] == "/clusters/%s/" % each.name, record
            # Both used by the package's tests already: their caches run.
            assert record["cache"] in ("syncing", "synced"), record
    # The token is checked with the path's cluster only, never sent to another: beta's API
    # server refused nothing while alpha's token listed the clusters (beta's version and
    # reachability are asked with the gateway's own identity there, if at all).
    before = refused_logins(beta)
    assert two_clusters.get("/clusters/alpha/api/v1/clusters", token=alpha.token).status == 200
    assert refused_logins(beta) == before
    # Alpha's token is not valid on beta's path.
    assert_error(two_clusters.get("/clusters/beta/api/v1/clusters", token=alpha.token), 401)
    assert_error(two_clusters.get("/clusters/alpha/api/v1/clusters", token=beta.token), 401)


def test_a_csrf_token_of_one_cluster_is_refused_by_the_other(two_clusters, alpha, beta):
    for seeded, other in ((alpha, beta), (beta, alpha)):
        mine = two_clusters.at("/clusters/" + seeded.name)
        theirs = two_clusters.at("/clusters/" + other.name)
        name = "crossed-" + secrets.token_hex(3)
        token = mine.csrf_token("namespace")
        reply = theirs.request("POST", "/api/v1/namespace", token=other.token,
                               body={"name": name}, headers={"X-CSRF-TOKEN": token})
        # Refused as any CSRF token not valid here is (tests/gateway/test_csrf.py).
        body = assert_error(reply, 401, "Unauthorized", ["MSG_CSRF_VALIDATION_ERROR"])
        assert body["details"]["causes"][0]["reason"] == "Invalid", body
        for each in (alpha, beta):
            assert each.cluster.request("GET", "/api/v1/namespaces/" + name)[0] == 404
        # The other cluster's own token does what this one could not.
        reply = theirs.request("POST", "/api/v1/namespace", token=other.token,
                               body={"name": name}, csrf="namespace")
        assert reply.status == 201, reply
        other.cluster.request("DELETE", "/api/v1/namespaces/" + name)


def test_a_shell_id_of_one_cluster_does_not_bind_on_the_other(js, two_clusters, alpha, beta):
    mine, theirs = two_clusters.at("/clusters/alpha"), two_clusters.at("/clusters/beta")
    session_id = new_session(mine, alpha.token, alpha.namespace, POD, CONTAINER)
    js.open("crossed", sockjs_url(theirs, session_id), bind=session_id)
    assert js.wait_closed("crossed") == UNKNOWN
    # Beta never held it: the id still binds where it was issued.
    conn = js.open("home", sockjs_url(mine, session_id), bind=session_id)
    js.stdin("home", "echo home-$((6*7))\r")
    js.wait_output("home", "home-42")
    assert conn.closed is None
    js.stdin("home", "exit\r")
    assert js.wait_closed("home") == (1, "Process exited")


def test_a_sockjs_session_opened_on_one_cluster_is_refused_on_the_other(two_clusters):
    on_alpha, on_beta = two_clusters.at("/clusters/alpha"), two_clusters.at("/clusters/beta")
    base = "/api/sockjs/000/crossing-%s/" % secrets.token_hex(3)
    opened = on_alpha.request("POST", base + "xhr")
    assert opened.status == 200 and opened.data == b"o\n", opened
    mine, path = owner_cookie(opened)
    assert path == ["Path=/clusters/alpha" + base.rstrip("/")]
    keys = b'["{\\"Op\\":\\"stdin\\",\\"Data\\":\\"id\\\\r\\"}"]'
    # Its opener's cookie, sent (as no browser would) to beta's path of the same session id.
    for method, tail, body in (("POST", "xhr_send", keys), ("POST", "xhr", None)):
        reply = on_beta.request(method, base + tail, raw_body=body, headers={"Cookie": mine})
        assert reply.status == 403, (tail, reply)
    sent = on_alpha.request("POST", base + "xhr_send", raw_body=keys, headers={"Cookie": mine})
    assert sent.status == 204, sent
