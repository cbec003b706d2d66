"""The audit trail end to end (issue #39) against the local cluster: an entry after every
write route, matched to its request by ``X-Request-Id``, naming who, the object and how it
went; terminal sessions opened and closed, never what was typed; what each of three tokens
may see; bad parameters; one JSON line per entry in the log; the embedded database kept
across a restart."""

import json
import os
import secrets

import pytest

from tests.gateway.helpers import audit_lines, full_log
from tests.resources import kube
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for
from tests.terminal.conftest import CONTAINER, create_pods
from tests.terminal.jsclient import new_session, sockjs_url

DEPLOYER_RULES = [
    {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "daemonsets",
                                          "replicasets", "deployments/scale"],
     "verbs": ["get", "list", "watch", "create", "update", "patch"]},
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"],
     "verbs": ["get", "list", "create"]},
    {"apiGroups": [""], "resources": ["replicationcontrollers", "configmaps", "secrets",
                                      "services", "pods"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create", "get"]},
]


@pytest.fixture(scope="module")
def audited(cluster, tmp_path_factory):
    """A gateway of this module's own, its settings ConfigMap in a namespace of its own."""
    settings = cluster.new_namespace("audit-settings")
    gw = Gateway.start(cluster, "--namespace", settings)
    gw.settings_namespace = settings
    yield gw
    gw.stop()
    cluster.request("DELETE", "/api/v1/namespaces/" + settings)


def entries(gw, token, **params):
    reply = gw.get("/api/v1/audit", token=token, params=params)
    assert reply.status == 200, reply
    return reply.json()


def recorded(gw, token, request_ids, **params):
    """The entries of ``request_ids`` (an entry is written once its response has gone out)."""
    def found():
        got = {}
        for entry in entries(gw, token, itemsPerPage=500, **params)["entries"]:
            got.setdefault(entry["requestId"], []).append(entry)
        return got if all(rid in got for rid in request_ids) else None
    return wait_for(found, timeout=10, interval=0.2, what="the audit entries")


def test_every_write_route_leaves_an_entry(audited, cluster, namespace, admin_token):
    ns, gw = namespace, audited
    sa = "deployer-" + secrets.token_hex(2)
    token = kube.grant(cluster, ns, sa, DEPLOYER_RULES)
    user = "system:serviceaccount:%s:%s" % (ns, sa)
    for plural, name in (("deployments", "web"), ("statefulsets", "db"),
                         ("daemonsets", "ds")):
        kube.apps(cluster, ns, plural, name, {"app": name})
    kube.replication_controller(cluster, ns, "rc", {"app": "rc"})
    kube.create(cluster, "/apis/batch/v1beta1/namespaces/%s/cronjobs" % ns, {
        "metadata": {"name": "cj"}, "spec": {"schedule": "0 0 1 1 *", "jobTemplate": {
            "spec": {"template": kube.template({"app": "cj"}, restartPolicy="Never")}}}})
    [node] = [n["metadata"]["name"] for n in cluster.request("GET", "/api/v1/nodes")[1]
              ["items"]][:1]
    configmap = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "cm", "namespace": ns}, "data": {"k": "v"}}
    raw = "/api/v1/_raw/configmap/namespace/%s/name/cm" % ns
    ops = [  # (route, method, path, body, CSRF action, token, kind, namespace, name)
        ("scale-namespaced", "PUT", "/api/v1/scale/deployment/%s/web?scaleBy=2" % ns, None,
         None, token, "deployment", ns, "web"),
        ("deployment-restart", "PUT", "/api/v1/deployment/%s/web/restart" % ns, None, None,
         token, "deployment", ns, "web"),
        ("deployment-pause", "PUT", "/api/v1/deployment/%s/web/pause" % ns, None, None, token,
         "deployment", ns, "web"),
        ("deployment-resume", "PUT", "/api/v1/deployment/%s/web/resume" % ns, None, None,
         token, "deployment", ns, "web"),
        ("deployment-rollback", "PUT", "/api/v1/deployment/%s/web/rollback" % ns,
         {"revision": "1"}, None, token, "deployment", ns, "web"),
        ("statefulset-restart", "PUT", "/api/v1/statefulset/%s/db/restart" % ns, None, None,
         token, "statefulset", ns, "db"),
        ("daemonset-restart", "PUT", "/api/v1/daemonset/%s/ds/restart" % ns, None, None,
         token, "daemonset", ns, "ds"),
        ("cronjob-trigger", "PUT", "/api/v1/cronjob/%s/cj/trigger" % ns, None, None, token,
         "cronjob", ns, "cj"),
        ("replicationcontroller-replicas", "POST",
         "/api/v1/replicationcontroller/%s/rc/update/pod" % ns, {"replicas": 2},
         "replicationcontroller", token, "replicationcontroller", ns, "rc"),
        ("raw-namespaced", "PUT", raw, configmap, None, token, "configmap", ns, "cm"),
        ("raw-namespaced", "DELETE", raw, None, None, token, "configmap", ns, "cm"),
        ("secret-create", "POST", "/api/v1/secret", {
            "name": "pull", "namespace": ns, "data": "e30="}, "secret", token, "secret", ns,
         "pull"),
        ("appdeployment", "POST", "/api/v1/appdeployment", {
            "name": "app", "namespace": ns, "containerImage": "nginx:1.19", "replicas": 1,
            "portMappings": [], "variables": [], "labels": [{"key": "app", "value": "app"}],
            "runAsPrivileged": False},
         "appdeployment", token, "deployment", ns, "app"),
        ("appdeploymentfromfile", "POST", "/api/v1/appdeploymentfromfile", {
            "name": "f", "namespace": ns,
            "content": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-file}\n"},
         "appdeploymentfromfile", token, "configmap", ns, "from-file"),
        ("settings-global", "PUT", "/api/v1/settings/global", {"clusterName": "audited"},
         None, admin_token, "configmap", gw.settings_namespace,
         "kubernetes-dashboard-settings"),
        # Refused changes are recorded too, with the API server's reason and the user it
        # names: nothing of the shared cluster's nodes or namespaces changes.
        ("node-drain", "PUT", "/api/v1/node/%s/drain" % node, {}, None, cluster.norights_token,
         "node", "", node),
        ("namespace-create", "POST", "/api/v1/namespace", {"name": "never-" + ns},
         "namespace", cluster.norights_token, "namespace", "", "never-" + ns),
    ]
    replies = {}
    for route, method, path, body, csrf, bearer, kind, where, name in ops:
        reply = gw.request(method, path, token=bearer, body=body, csrf=csrf)
        assert reply.status < 500, (route, reply)
        replies[reply.headers["X-Request-Id"]] = (route, method, reply, kind, where, name,
                                                  bearer)
    got = recorded(gw, admin_token, list(replies))
    for rid, (route, method, reply, kind, where, name, bearer) in replies.items():
        [entry] = got[rid]
        assert (entry["route"], entry["method"], entry["status"]) == (route, method,
                                                                     reply.status), entry
        assert (entry["kind"], entry["namespace"], entry["name"]) == (kind, where, name), entry
        assert entry["cluster"] == "local" and entry["client"] == "127.0.0.1"
        if bearer == token:
            # The token's claim, verified by the API server's acceptance of this very write.
            accepted = 200 <= reply.status < 400
            assert (entry["user"], entry["userVerified"], entry["userSource"]) == (
                user, accepted, "token" if accepted else "claim"), entry
        elif bearer == cluster.norights_token:
            assert reply.status == 403, reply
            assert (entry["user"], entry["userSource"], entry["reason"]) == (
                "nobody", "apiserver", "Forbidden"), entry
    # The application deployment names both objects it made.
    [made] = [rid for rid, op in replies.items() if op[0] == "appdeployment"]
    assert [(e["kind"], e["name"]) for e in got[made]] == [("deployment", "app")]
    # Each entry went to the log as one line of JSON, without the token.
    logged = {e["requestId"] for e in audit_lines(gw)}
    assert set(replies) <= logged
    assert token not in full_log(gw)


def test_terminal_sessions_are_recorded_without_what_was_typed(audited, cluster, namespace,
                                                               admin_token, js):
    ns, gw = namespace, audited
    token = kube.grant(cluster, ns, "shell-user", DEPLOYER_RULES)
    create_pods(cluster, ns, {"sh": "nginx:1.19"})
    session_id = new_session(gw, token, ns, "sh", CONTAINER)
    js.open("t", sockjs_url(gw, session_id), bind=session_id)
    typed = "typed-" + secrets.token_hex(6)
    js.stdin("t", "echo %s\r" % typed)
    js.wait_output("t", typed)
    js.stdin("t", "exit\r")
    assert js.wait_closed("t") == (1, "Process exited")

    def both():
        mine = [e for e in entries(gw, admin_token, namespace=ns, kind="pod")["entries"]
                if e["route"] == "terminal"]
        return mine if {e["details"]["event"] for e in mine} == {"opened", "closed"} else None
    closed, opened = wait_for(both, timeout=10, what="the terminal's entries")
    for entry in (opened, closed):
        assert (entry["name"], entry["namespace"], entry["details"]["container"]) == (
            "sh", ns, CONTAINER)
        assert entry["user"] == "system:serviceaccount:%s:shell-user" % ns
        assert entry["userVerified"] and entry["status"] == 101
        assert entry["requestId"] == opened["requestId"]   # the session's fingerprint
    assert closed["details"]["code"] == 1 and closed["details"]["shell"] == "bash"
    assert typed not in json.dumps(entries(gw, admin_token, namespace=ns))
    log = full_log(gw)
    assert ("echo " + typed) not in log and token not in log


def test_what_three_tokens_may_see(audited, cluster, namespace, admin_token):
    gw, team = audited, cluster.editor_namespace
    body = lambda ns: {"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "seen", "namespace": ns}}
    ids = []
    for ns, token in ((team, cluster.editor_token), (namespace, admin_token)):
        reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/seen" % ns,
                           token=token, body=body(ns))
        assert reply.status == 204, reply
        ids.append(reply.headers["X-Request-Id"])
    recorded(gw, admin_token, ids)
    try:
        admin = {e["requestId"] for e in entries(gw, admin_token, itemsPerPage=500)["entries"]}
        assert set(ids) <= admin
        # The editor may list config maps in team-a only: that entry, not the other.
        editor = entries(gw, cluster.editor_token, itemsPerPage=500)
        shown = {e["requestId"] for e in editor["entries"]}
        assert ids[0] in shown and ids[1] not in shown
        assert {e["namespace"] for e in editor["entries"]} == {team}
        assert editor["listMeta"]["totalItems"] == len(editor["entries"])
        # A token without rights sees nothing at all.
        nobody = entries(gw, cluster.norights_token)
        assert nobody["entries"] == [] and nobody["listMeta"]["totalItems"] == 0
    finally:
        cluster.request("DELETE", "/api/v1/namespaces/%s/configmaps/seen" % team)


def test_filters_paging_and_bad_parameters(audited, cluster, namespace, admin_token):
    gw = audited
    ids = []
    for i in range(3):
        reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/p%d" % (namespace, i),
                           token=admin_token, body={"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": "p%d" % i}})
        assert reply.status == 204, reply
        ids.append(reply.headers["X-Request-Id"])
    recorded(gw, admin_token, ids, namespace=namespace)
    first = entries(gw, admin_token, namespace=namespace, itemsPerPage=2, page=1)
    second = entries(gw, admin_token, namespace=namespace, itemsPerPage=2, page=2)
    assert first["listMeta"]["totalItems"] == 3
    assert [e["name"] for e in first["entries"] + second["entries"]] == ["p2", "p1", "p0"]
    since = first["entries"][1]["time"]
    assert [e["name"] for e in entries(gw, admin_token, namespace=namespace,
                                        since=since)["entries"]] == ["p2", "p1"]
    assert entries(gw, admin_token, namespace=namespace, until=since)["entries"][0]["name"] \
        == "p0"
    assert entries(gw, admin_token, namespace=namespace, kind="Secret")["entries"] == []
    for params, says in (({"since": "yesterday"}, "since"), ({"until": "2026-01-01"}, "until"),
                         ({"itemsPerPage": "0"}, "itemsPerPage"),
                         ({"itemsPerPage": "501"}, "itemsPerPage"), ({"page": "x"}, "page"),
                         ({"since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
                          "since"), ({"user": "u" * 600}, "user")):
        reply = gw.get("/api/v1/audit", token=admin_token, params=params)
        assert reply.status == 400 and says in reply.json()["message"], (params, reply)
    assert gw.get("/api/v1/audit").status == 401
    assert gw.get("/api/v1/audit", token="not-a-token").status == 401


def test_the_database_is_kept_across_a_restart(cluster, namespace, admin_token, tmp_path):
    path = str(tmp_path / "state" / "audit.db")
    gw = Gateway.start(cluster, "--audit-db", path)
    try:
        reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/kept" % namespace,
                           token=admin_token, body={"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": "kept"}})
        assert reply.status == 204, reply
        rid = reply.headers["X-Request-Id"]
        recorded(gw, admin_token, [rid])
    finally:
        gw.stop()
    assert os.path.exists(path)
    again = Gateway.start(cluster, "--audit-db", path)
    try:
        got = recorded(again, admin_token, [rid])
        assert got[rid][0]["name"] == "kept"
    finally:
        again.stop()


def test_a_flood_of_reads_is_bounded_and_the_gateway_answers(audited, admin_token):
    """Many large reads at once: each answered 200 or told to come back (429), never more
    than a few waiting for the database's thread; /healthz and lists keep answering."""
    import concurrent.futures

    from tests.support.probe import Probe
    gw = audited
    params = {"itemsPerPage": 500, "since": "2000-01-01T00:00:00Z"}

    def read(i):
        reply = gw.get("/api/v1/audit", token=admin_token,
                       params=dict(params, page=1 + i % 3, user="u\x01" if i % 7 == 0 else ""))
        return reply.status
    with Probe(gw, admin_token) as probe:
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(read, range(200)))
    probe.assert_responsive(max_seconds=1.0)
    assert set(statuses) <= {200, 400, 429}, statuses
    assert statuses.count(400) == len(range(0, 200, 7))   # the control character
    assert 200 in statuses
