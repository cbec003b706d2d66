"""GET /api/v1/log/source/{namespace}/{resourceName}/{resourceType} for pods and every owner
kind, against objects made by the cluster's own controllers."""

import pytest

from tests.logs.kube import SIM, create, pod_spec, run_pod

TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": pod_spec(containers=("web", "sidecar"), init=("setup",))}
SELECTOR = {"matchLabels": {"app": "web"}}


def sources(gateway, token, namespace, name, kind):
    return gateway.get("/api/v1/log/source/%s/%s/%s" % (namespace, name, kind), token)


def pod_names(cluster, namespace, count):
    """Waits for `count` pods labelled app=web besides the bare one; returns all names."""
    def names():
        items = cluster.request("GET", "/api/v1/namespaces/%s/pods" % namespace,
                                params={"labelSelector": "app=web"})[1]["items"]
        owned = sorted(p["metadata"]["name"] for p in items if p["metadata"]["name"] != "stray")
        return owned if len(owned) == count else None
    return cluster.wait_for(names, timeout=40, what="%d pods" % count)


def expect(body, pods, containers=("web", "sidecar"), inits=("setup",)):
    assert sorted(body["podNames"]) == sorted(pods)
    assert body["containerNames"] == list(containers)
    assert body["initContainerNames"] == list(inits)
    assert sorted(e["podName"] for e in body["logSources"]) == sorted(pods)
    for entry in body["logSources"]:
        assert entry["containerNames"] == list(containers)
        assert entry["initContainerNames"] == list(inits)


@pytest.fixture
def stray(cluster, namespace):
    """A pod with the same labels that another object controls: selectors match it, and no
    controller adopts it (they would adopt an orphan)."""
    keeper = create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                    {"metadata": {"name": "keeper"}})
    run_pod(cluster, namespace, "stray", containers=("web", "sidecar"), init=("setup",),
            labels={"app": "web"}, owner={"apiVersion": "v1", "kind": "ConfigMap",
                                          "name": "keeper", "uid": keeper["metadata"]["uid"],
                                          "controller": True})
    return "stray"


def test_pod(gateway, admin_token, cluster, namespace, stray):
    body = sources(gateway, admin_token, namespace, stray, "pod").json()
    expect(body, [stray])


@pytest.mark.parametrize("plural,kind,group_version,replicas", [
    ("deployments", "deployment", "apps/v1", 2),
    ("statefulsets", "statefulset", "apps/v1", 2),
    ("daemonsets", "daemonset", "apps/v1", None),
    ("replicasets", "replicaset", "apps/v1", 2),
])
def test_apps_controllers(gateway, admin_token, cluster, namespace, stray, plural, kind,
                          group_version, replicas):
    spec = {"selector": SELECTOR, "template": TEMPLATE}
    if replicas:
        spec["replicas"] = replicas
    if kind == "statefulset":
        spec["serviceName"] = "web"
    create(cluster, "/apis/%s/namespaces/%s/%s" % (group_version, namespace, plural),
           {"metadata": {"name": "web"}, "spec": spec})
    pods = pod_names(cluster, namespace, replicas or len(cluster.nodes))
    reply = sources(gateway, admin_token, namespace, "web", kind)
    assert reply.status == 200, reply
    expect(reply.json(), pods)
    if kind == "deployment":
        sets = cluster.request("GET", "/apis/apps/v1/namespaces/%s/replicasets" % namespace)[1]
        name = sets["items"][0]["metadata"]["name"]
        expect(sources(gateway, admin_token, namespace, name, "replicaset").json(), pods)


def test_replication_controller_and_service(gateway, admin_token, cluster, namespace, stray):
    create(cluster, "/api/v1/namespaces/%s/replicationcontrollers" % namespace, {
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"app": "web"}, "template": TEMPLATE}})
    pods = pod_names(cluster, namespace, 2)
    expect(sources(gateway, admin_token, namespace, "web", "replicationcontroller").json(), pods)
    create(cluster, "/api/v1/namespaces/%s/services" % namespace, {
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    # A service has no owner: every pod it selects counts, the stray one too.
    expect(sources(gateway, admin_token, namespace, "web", "service").json(), pods + [stray])
    create(cluster, "/api/v1/namespaces/%s/services" % namespace, {
        "metadata": {"name": "external"},
        "spec": {"type": "ExternalName", "externalName": "example.com"}})
    expect(sources(gateway, admin_token, namespace, "external", "service").json(), [], (), ())


def test_job_and_cron_job(gateway, admin_token, cluster, namespace, stray):
    job_template = {"metadata": {"labels": {"app": "web"},
                                 "annotations": {SIM + "run-seconds": "600"}},
                    "spec": dict(TEMPLATE["spec"], restartPolicy="Never")}
    create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % namespace,
           {"metadata": {"name": "once"}, "spec": {"template": job_template}})
    pods = pod_names(cluster, namespace, 1)
    expect(sources(gateway, admin_token, namespace, "once", "job").json(), pods)

    version = next(v for v in ("v1", "v1beta1") if cluster.request(
        "GET", "/apis/batch/%s" % v)[0] == 200 and any(
        r["name"] == "cronjobs" for r in cluster.request("GET", "/apis/batch/%s" % v)[1]["resources"]))
    cron = create(cluster, "/apis/batch/%s/namespaces/%s/cronjobs" % (version, namespace), {
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "suspend": True,
                 "jobTemplate": {"spec": {"template": job_template}}}})
    # What the cron job controller does at 3 a.m.: a job it controls.
    create(cluster, "/apis/batch/v1/namespaces/%s/jobs" % namespace, {
        "metadata": {"name": "nightly-1", "ownerReferences": [{
            "apiVersion": "batch/%s" % version, "kind": "CronJob", "name": "nightly",
            "uid": cron["metadata"]["uid"], "controller": True}]},
        "spec": {"template": job_template}})
    all_pods = pod_names(cluster, namespace, 2)
    expect(sources(gateway, admin_token, namespace, "nightly", "cronjob").json(),
           [p for p in all_pods if p not in pods])


def test_errors(gateway, admin_token, norights_token, cluster, namespace, stray):
    assert sources(gateway, None, namespace, stray, "pod").status == 401
    forbidden = sources(gateway, norights_token, namespace, stray, "pod")
    assert forbidden.status == 403 and "nobody" in forbidden.json()["message"]
    assert sources(gateway, norights_token, namespace, "web", "deployment").status == 403
    assert sources(gateway, admin_token, namespace, "none", "deployment").status == 404
    assert sources(gateway, admin_token, namespace, "none", "pod").status == 404
    unknown = sources(gateway, admin_token, namespace, stray, "configmap")
    assert unknown.status == 400 and "configmap" in unknown.json()["message"]
