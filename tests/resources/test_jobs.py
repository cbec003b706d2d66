"""Job and CronJob routes (cron jobs are batch/v1beta1 on the local 1.20 cluster)."""

import pytest

from tests.resources import kube
from tests.resources.checks import get, usable_only


def job_body(name, labels, completions=1, **template_spec):
    return {"metadata": {"name": name, "labels": labels},
            "spec": {"completions": completions, "parallelism": 1, "backoffLimit": 0,
                     "template": kube.template(labels, restartPolicy="Never", **template_spec)}}


def test_job_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    job = kube.create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % ns,
                      job_body("once", {"app": "once"}))
    kube.wait_object(cluster, "/apis/batch/v1/namespaces/%s/jobs/once" % ns,
                     lambda j: j["status"].get("succeeded") == 1, what="the job to complete")
    kube.create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % ns,
                job_body("waiting", {"app": "waiting"}, nodeName="no-such-node"))
    kube.wait_pods(cluster, ns, "app=waiting", 1, phase="Pending")
    # podInfo.current is the job's status.active, which the job controller sets a little later.
    kube.wait_object(cluster, "/apis/batch/v1/namespaces/%s/jobs/waiting" % ns,
                     lambda j: j["status"].get("active") == 1, what="the job to count its pod")
    kube.event(cluster, ns, "once.1", kube.involved(job, "Job"), "Completed", "done")

    body = get(gateway, "/api/v1/job/" + ns, admin_token, sortBy="a,name")
    assert kube.names(body, "jobs") == ["once", "waiting"]
    once, waiting = body["jobs"]
    assert once["typeMeta"] == {"kind": "job"} and once["parallelism"] == 1
    assert once["jobStatus"]["status"] == "Complete" and once["jobStatus"]["message"] == ""
    assert [c["type"] for c in once["jobStatus"]["conditions"]] == ["Complete"]
    assert once["podInfo"]["succeeded"] == 1 and once["podInfo"]["desired"] == 1
    assert waiting["jobStatus"] == {"status": "Running", "message": "", "conditions": None}
    assert waiting["podInfo"]["pending"] == 1 and waiting["podInfo"]["current"] == 1
    assert body["status"] == {"running": 0, "pending": 1, "failed": 0, "succeeded": 1,
                              "terminating": 0}
    assert body["cumulativeMetrics"] == [] and body["errors"] == []

    d = get(gateway, "/api/v1/job/%s/once" % ns, admin_token)
    assert d["completions"] == 1 and d["errors"] == []
    assert (d["podInfo"]["running"], d["podInfo"]["succeeded"], d["podInfo"]["failed"]) == (0, 1, 0)
    pods = get(gateway, "/api/v1/job/%s/once/pod" % ns, admin_token)
    assert pods["listMeta"] == {"totalItems": 1}
    assert pods["pods"][0]["status"] == "Completed"
    events = get(gateway, "/api/v1/job/%s/once/event" % ns, admin_token)
    assert "once.1" in [e["objectMeta"]["name"] for e in events["events"]]


def test_failed_job(cluster, gateway, namespace, admin_token):
    # A pod that exits 1 (crash loop annotation, restartPolicy Never) fails the job.
    kube.create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % namespace, {
        "metadata": {"name": "bad"},
        "spec": {"backoffLimit": 0, "template": {
            "metadata": {"labels": {"app": "bad"},
                         "annotations": {"sim.dashboard.io/crashloop": "app"}},
            "spec": kube.pod_spec(restartPolicy="Never")}}})
    kube.wait_object(cluster, "/apis/batch/v1/namespaces/%s/jobs/bad" % namespace,
                     lambda j: any(c["type"] == "Failed" for c in j["status"].get(
                         "conditions", [])), what="the job to fail")
    body = get(gateway, "/api/v1/job/" + namespace, admin_token)
    [job] = body["jobs"]
    assert job["jobStatus"]["status"] == "Failed" and job["jobStatus"]["message"]
    assert body["status"]["failed"] == 1


def cronjob_path(cluster, ns):
    version = cluster.served_version("batch", "cronjobs", ["v1", "v1beta1"])
    return "/apis/batch/%s/namespaces/%s/cronjobs" % (version, ns)


def test_cronjob_routes(cluster, gateway, namespace, admin_token):
    ns = namespace
    cron = kube.create(cluster, cronjob_path(cluster, ns), {
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid",
                 "startingDeadlineSeconds": 100,
                 "jobTemplate": {"spec": {"template": kube.template(
                     {"app": "nightly"}, restartPolicy="Never",
                     containers=[kube.container("app", "busybox:1.32")])}}}})
    kube.create(cluster, cronjob_path(cluster, ns), {
        "metadata": {"name": "paused"},
        "spec": {"schedule": "*/5 * * * *", "suspend": True,
                 "jobTemplate": {"spec": {"template": kube.template(
                     {"app": "paused"}, restartPolicy="Never")}}}})
    owner = [{"apiVersion": cron["apiVersion"], "kind": "CronJob", "name": "nightly",
              "uid": cron["metadata"]["uid"], "controller": True}]
    for name, node in (("nightly-done", None), ("nightly-running", "no-such-node")):
        body = job_body(name, {"run": name}, **({"nodeName": node} if node else {}))
        body["metadata"]["ownerReferences"] = owner
        kube.create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % ns, body)
    kube.create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % ns,
                job_body("unrelated", {"run": "unrelated"}))
    kube.wait_object(cluster, "/apis/batch/v1/namespaces/%s/jobs/nightly-done" % ns,
                     lambda j: j["status"].get("succeeded") == 1, what="nightly-done")
    kube.wait_object(cluster, "/apis/batch/v1/namespaces/%s/jobs/nightly-running" % ns,
                     lambda j: j["status"].get("active") == 1, what="nightly-running")
    kube.event(cluster, ns, "nightly.1", kube.involved(cron, "CronJob"), "Hello", "hi")

    body = get(gateway, "/api/v1/cronjob/" + ns, admin_token, sortBy="a,name")
    assert "cumulativeMetrics" not in body and body["errors"] == []
    assert kube.names(body, "items") == ["nightly", "paused"]
    nightly, paused = body["items"]
    assert nightly["typeMeta"] == {"kind": "cronjob"}
    assert (nightly["schedule"], nightly["suspend"], nightly["active"],
            nightly["lastSchedule"]) == ("0 3 * * *", False, 0, None)
    assert nightly["containerImages"] == ["busybox:1.32"]
    assert paused["suspend"] is True
    assert body["status"] == {"running": 1, "pending": 0, "failed": 1, "succeeded": 0,
                              "terminating": 0}

    d = get(gateway, "/api/v1/cronjob/%s/nightly" % ns, admin_token)
    assert (d["concurrencyPolicy"], d["startingDeadlineSeconds"], d["errors"]) == (
        "Forbid", 100, [])

    active = get(gateway, "/api/v1/cronjob/%s/nightly/job" % ns, admin_token)
    assert kube.names(active, "jobs") == ["nightly-running"]
    assert active["status"]["pending"] == 1
    inactive = get(gateway, "/api/v1/cronjob/%s/nightly/job" % ns, admin_token,
                      active="false")
    assert kube.names(inactive, "jobs") == ["nightly-done"]

    events = get(gateway, "/api/v1/cronjob/%s/nightly/event" % ns, admin_token)
    # The cron job controller may add UnexpectedJob events about the hand-made jobs.
    assert "Hello" in [e["reason"] for e in events["events"]]
    assert {(e["objectKind"], e["objectName"]) for e in events["events"]} == {
        ("CronJob", "nightly")}


@pytest.mark.parametrize("kind,key", [("job", "jobs"), ("cronjob", "items")])
def test_batch_rights_and_missing(gateway, namespace, admin_token, editor_token,
                                  norights_token, kind, key):
    reply = gateway.get("/api/v1/%s/%s" % (kind, namespace), token=norights_token)
    assert reply.status == 403 and 'User "nobody" cannot list' in reply.json()["message"]
    usable_only(gateway, "/api/v1/" + kind, editor_token)
    ok = gateway.get("/api/v1/%s/team-a" % kind, token=editor_token)
    assert ok.status == 200 and key in ok.json()
    for suffix in ("", "/event", "/job" if kind == "cronjob" else "/pod"):
        forbidden = gateway.get("/api/v1/%s/%s/any%s" % (kind, namespace, suffix),
                                token=norights_token)
        assert forbidden.status == 403, (suffix, forbidden)
        missing = gateway.get("/api/v1/%s/%s/nope%s" % (kind, namespace, suffix),
                              token=admin_token)
        assert missing.status == 404, (suffix, missing)
    assert gateway.get("/api/v1/%s/%s" % (kind, namespace), token=admin_token,
                       params={"sortBy": "a,name,b"}).status == 400
