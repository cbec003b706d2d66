"""Deployment pause, resume, restart, rollback; stateful set and daemon set restart; cron job
trigger; replication controller replica count. Effects are read back from the API server and
the controllers are seen to act on them."""

import pytest

from tests.gateway.helpers import assert_error
from tests.resources import kube
from tests.writes.helpers import bad, csrf_refused, forbidden, generation, read, unauthorized

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
REVISION = "deployment.kubernetes.io/revision"


def dep_path(ns, name="web"):
    return "/apis/apps/v1/namespaces/%s/deployments/%s" % (ns, name)


def op(gateway, token, ns, name, what, body=None, kind="deployment"):
    return gateway.request("PUT", "/api/v1/%s/%s/%s/%s" % (kind, ns, name, what), token=token,
                           body=body)


def revision(cluster, ns):
    return (read(cluster, dep_path(ns))["metadata"].get("annotations") or {}).get(REVISION)


def test_pause_and_resume(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.apps(cluster, ns, "deployments", "web", {"app": "web"})
    forbidden(op(gateway, cluster.norights_token, ns, "web", "pause"), "get", "deployments")
    unauthorized(op(gateway, None, ns, "web", "pause"))
    reply = op(gateway, admin_token, ns, "web", "pause")
    assert reply.status == 200, reply
    assert reply.json()["kind"] == "Deployment" and reply.json()["spec"]["paused"] is True
    assert read(cluster, dep_path(ns))["spec"]["paused"] is True
    assert_error(op(gateway, admin_token, ns, "web", "pause"), 409, "Conflict",
                 ["already paused"])
    assert op(gateway, admin_token, ns, "web", "resume").status == 200
    assert not read(cluster, dep_path(ns))["spec"].get("paused")
    before = generation(cluster, dep_path(ns))
    assert_error(op(gateway, admin_token, ns, "web", "resume"), 409, "Conflict",
                 ["already resumed"])
    assert generation(cluster, dep_path(ns)) == before
    body = assert_error(op(gateway, admin_token, ns, "nope", "pause"), 404, "NotFound")
    assert '"nope" not found' in body["message"]


def test_restart_then_rollback(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.apps(cluster, ns, "deployments", "web", {"app": "web"})
    cluster.wait_for(lambda: revision(cluster, ns) == "1", what="revision 1")
    reply = op(gateway, admin_token, ns, "web", "restart")
    assert reply.status == 200 and reply.json() == {"revision": "1"}, reply
    template = read(cluster, dep_path(ns))["spec"]["template"]
    assert RESTARTED_AT in template["metadata"]["annotations"]
    # The controller rolls out a new replica set for the restarted template.
    cluster.wait_for(lambda: revision(cluster, ns) == "2", timeout=30, what="revision 2")

    status, _ = cluster.request("PATCH", dep_path(ns), {"spec": {"template": {"spec": {
        "containers": [{"name": "app", "image": "nginx:1.20"}]}}}},
        content_type="application/strategic-merge-patch+json")
    assert status == 200
    cluster.wait_for(lambda: revision(cluster, ns) == "3", timeout=30, what="revision 3")

    before = generation(cluster, dep_path(ns))
    for body, says in (({"revision": "one"}, "revision"), ({"revision": 0}, "revision"),
                       ([], "revision"), (None, "revision")):
        bad(op(gateway, admin_token, ns, "web", "rollback", body=body), says)
    assert_error(op(gateway, admin_token, ns, "web", "rollback", body={"revision": "9"}), 404,
                 "NotFound", ["no ReplicaSet that has the requested revision"])
    forbidden(op(gateway, cluster.norights_token, ns, "web", "rollback",
                 body={"revision": "1"}), "get", "deployments")
    assert generation(cluster, dep_path(ns)) == before

    reply = op(gateway, admin_token, ns, "web", "rollback", body={"revision": "1"})
    assert reply.status == 200 and set(reply.json()) == {"revision"}, reply
    spec = read(cluster, dep_path(ns))["spec"]["template"]["spec"]
    assert spec["containers"][0]["image"] == "nginx:1.19"
    cluster.wait_for(lambda: revision(cluster, ns) == "4", timeout=30,
                     what="the rollback's revision 4")


@pytest.mark.parametrize("kind, plural", [("statefulset", "statefulsets"),
                                          ("daemonset", "daemonsets")])
def test_stateful_set_and_daemon_set_restart(cluster, gateway, namespace, admin_token, kind,
                                             plural):
    ns = namespace
    extra = {"serviceName": "s"} if kind == "statefulset" else {}
    kube.apps(cluster, ns, plural, "s", {"app": "s"}, **extra)
    path = "/apis/apps/v1/namespaces/%s/%s/s" % (ns, plural)
    kube.wait_object(cluster, path, lambda o: o["status"].get("observedGeneration") == 1,
                     what="the controller seeing %s" % kind)
    forbidden(op(gateway, cluster.norights_token, ns, "s", "restart", kind=kind), "get", plural)
    assert generation(cluster, path) == 1
    reply = op(gateway, admin_token, ns, "s", "restart", kind=kind)
    assert reply.status == 200, reply
    assert RESTARTED_AT in reply.json()["spec"]["template"]["metadata"]["annotations"]
    live = read(cluster, path)
    assert RESTARTED_AT in live["spec"]["template"]["metadata"]["annotations"]
    assert live["metadata"]["generation"] == 2
    kube.wait_object(cluster, path, lambda o: o["status"].get("observedGeneration") == 2,
                     what="the controller acting on the restart")
    assert_error(op(gateway, admin_token, ns, "nope", "restart", kind=kind), 404, "NotFound")


def test_cron_job_trigger(cluster, gateway, namespace, admin_token):
    ns = namespace
    version = cluster.served_version("batch", "cronjobs", ["v1", "v1beta1"])
    long_name = "nightly-report-of-everything-in-the-cluster-x"  # 45 characters
    for name in ("nightly", long_name):
        kube.create(cluster, "/apis/batch/%s/namespaces/%s/cronjobs" % (version, ns), {
            "metadata": {"name": name}, "spec": {
                "schedule": "0 0 1 1 *", "suspend": True, "jobTemplate": {
                    "metadata": {"labels": {"run": "manual"}},
                    "spec": {"template": {"spec": dict(kube.pod_spec(),
                                                       restartPolicy="Never")}}}}})
    forbidden(op(gateway, cluster.norights_token, ns, "nightly", "trigger", kind="cronjob"),
              "get", "cronjobs")
    unauthorized(op(gateway, None, ns, "nightly", "trigger", kind="cronjob"))
    assert_error(op(gateway, admin_token, ns, "nope", "trigger", kind="cronjob"), 404,
                 "NotFound")
    status, jobs = cluster.request("GET", "/apis/batch/v1/namespaces/%s/jobs" % ns)
    assert jobs["items"] == []

    for name in ("nightly", long_name):
        reply = op(gateway, admin_token, ns, name, "trigger", kind="cronjob")
        assert reply.status == 200 and reply.data == b"", reply
    cronjob = read(cluster, "/apis/batch/%s/namespaces/%s/cronjobs/nightly" % (version, ns))
    status, jobs = cluster.request("GET", "/apis/batch/v1/namespaces/%s/jobs" % ns)
    by_prefix = {j["metadata"]["name"].rsplit("-manual-", 1)[0]: j for j in jobs["items"]}
    assert set(by_prefix) == {"nightly", long_name[:41]}
    job = by_prefix["nightly"]
    assert len(job["metadata"]["name"]) == len("nightly-manual-") + 3
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["labels"]["run"] == "manual"
    [owner] = job["metadata"]["ownerReferences"]
    assert owner["uid"] == cronjob["metadata"]["uid"] and owner["kind"] == "CronJob"
    assert owner["controller"] is True and owner["apiVersion"] == "batch/" + version
    # The job controller runs it.
    kube.wait_object(cluster, "/apis/batch/v1/namespaces/%s/jobs/%s"
                     % (ns, job["metadata"]["name"]),
                     lambda j: (j.get("status") or {}).get("active") or
                     (j.get("status") or {}).get("succeeded"), what="the job started")


def test_replication_controller_replicas(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.replication_controller(cluster, ns, "rc", {"app": "rc"})
    path = "/api/v1/namespaces/%s/replicationcontrollers/rc" % ns
    url = "/api/v1/replicationcontroller/%s/rc/update/pod" % ns
    action = "replicationcontroller"
    csrf_refused(gateway.request("POST", url, token=admin_token, body={"replicas": 2}))
    for body, says in (({"replicas": -1}, "replicas"), ({"replicas": "2"}, "replicas"),
                       ({"replicas": 1.5}, "replicas"), ({}, "replicas")):
        bad(gateway.request("POST", url, token=admin_token, body=body, csrf=action), says)
    forbidden(gateway.request("POST", url, token=cluster.norights_token, body={"replicas": 2},
                              csrf=action), "get", "replicationcontrollers")
    assert read(cluster, path)["spec"]["replicas"] == 1
    reply = gateway.request("POST", url, token=admin_token, body={"replicas": 2}, csrf=action)
    assert reply.status == 202 and reply.data == b"", reply
    assert read(cluster, path)["spec"]["replicas"] == 2
    kube.wait_object(cluster, path, lambda rc: rc["status"].get("replicas") == 2,
                     what="the controller making two pods")
    assert_error(gateway.request("POST", "/api/v1/replicationcontroller/%s/nope/update/pod"
                                 % ns, token=admin_token, body={"replicas": 2}, csrf=action),
                 404, "NotFound")


@pytest.mark.parametrize("method, template", [
    ("PUT", "/api/v1/deployment/{ns}/{name}/pause"),
    ("PUT", "/api/v1/deployment/{ns}/{name}/resume"),
    ("PUT", "/api/v1/deployment/{ns}/{name}/restart"),
    ("PUT", "/api/v1/deployment/{ns}/{name}/rollback"),
    ("PUT", "/api/v1/statefulset/{ns}/{name}/restart"),
    ("PUT", "/api/v1/daemonset/{ns}/{name}/restart"),
    ("PUT", "/api/v1/cronjob/{ns}/{name}/trigger"),
    ("POST", "/api/v1/replicationcontroller/{ns}/{name}/update/pod"),
    ("PUT", "/api/v1/scale/deployment/{ns}/{name}"),
    ("PUT", "/api/v1/_raw/deployment/namespace/{ns}/name/{name}"),
    ("DELETE", "/api/v1/_raw/deployment/namespace/{ns}/name/{name}")])
def test_names_that_are_not_one_path_segment_reach_nothing(cluster, gateway, admin_token,
                                                           method, template):
    """`a%2Fb` and `%2E%2E` decode to names no object can have; used as a path segment they
    would point elsewhere (another resource, a parent path)."""
    body = {"revision": "1", "replicas": 1}
    csrf = "replicationcontroller" if method == "POST" else None
    for ns, name in (("team-a", "a%2Fb"), ("%2E%2E", "web"), ("team-a", "%2E%2E")):
        url = template.format(ns=ns, name=name)
        reply = gateway.request(method, url, token=admin_token, body=body, csrf=csrf,
                                params={"scaleBy": 1} if "/scale/" in url else None)
        bad(reply, "invalid name")
