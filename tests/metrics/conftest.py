"""Fixtures of the metrics tests: sample pods, the sidecar (its own service account, reading
the cluster's metrics stand-in every second) and a gateway that uses it."""

import os
import tempfile

import pytest

from tests.metrics.sidecar import Sidecar, sidecar_identity, wait_points
from tests.resources import kube
from tests.support.gateway import Gateway

SOLO_CONTAINERS = [
    kube.container("app", resources={"requests": {"cpu": "100m", "memory": "64Mi"},
                                     "limits": {"cpu": "1", "memory": "128Mi"}}),
    kube.container("side", resources={"requests": {"cpu": "250000u", "memory": "1Gi"},
                                      "limits": {"cpu": "500m", "memory": "2Gi"}}),
]


@pytest.fixture
def start_gateway(cluster):
    started = []

    def start(*args, **kw):
        gw = Gateway.start(cluster, *args, **kw)
        started.append(gw)
        return gw

    yield start
    for gw in started:
        gw.stop()


@pytest.fixture(scope="package")
def metrics_ns(cluster):
    """A namespace with: pod ``solo`` (two containers), deployment ``web`` (2 replicas),
    replica set ``rs`` (1 replica), pod ``claimer`` mounting claim ``data``; all Running."""
    ns = cluster.new_namespace("metrics")
    kube.pod(cluster, ns, "solo", containers=SOLO_CONTAINERS)
    kube.apps(cluster, ns, "deployments", "web", {"app": "web"}, replicas=2)
    kube.apps(cluster, ns, "replicasets", "rs", {"app": "rs"}, replicas=1)
    pv = "pv-" + ns
    kube.create(cluster, "/api/v1/persistentvolumes", {
        "metadata": {"name": pv},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "storageClassName": "manual", "hostPath": {"path": "/tmp/" + pv},
                 "claimRef": {"namespace": ns, "name": "data"}}})
    kube.create(cluster, "/api/v1/namespaces/%s/persistentvolumeclaims" % ns, {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "manual",
                 "volumeName": pv, "resources": {"requests": {"storage": "1Gi"}}}})
    kube.pod(cluster, ns, "claimer", volumes=[{"name": "data",
                                                "persistentVolumeClaim": {"claimName": "data"}}])
    for selector, count in (("app=solo", 1), ("app=web", 2), ("app=rs", 1),
                            ("app=claimer", 1)):
        kube.wait_pods(cluster, ns, selector, count, timeout=90)
    yield ns
    cluster.request("DELETE", "/api/v1/namespaces/" + ns)
    cluster.request("DELETE", "/api/v1/persistentvolumes/" + pv)


@pytest.fixture(scope="package")
def sidecar_token(cluster, metrics_ns):
    token, role = sidecar_identity(cluster, metrics_ns)
    yield token
    cluster.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + role)
    cluster.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + role)


@pytest.fixture(scope="package")
def state_dir():
    with tempfile.TemporaryDirectory(prefix="metrics-tests-") as d:
        yield d


def new_sidecar(cluster, token, state_dir, name, channel=None, **kw):
    kubeconfig = cluster.metrics_kubeconfig(os.path.join(state_dir, name + ".kubeconfig"),
                                            token, channel)
    return Sidecar(kubeconfig, **kw)


@pytest.fixture(scope="package")
def sidecar(cluster, sidecar_token, state_dir, metrics_ns):
    """Scrapes every second, keeps 6 s, in a database file; has a few points of every pod."""
    side = new_sidecar(cluster, sidecar_token, state_dir, "main", resolution="1s",
                       duration="6s", db_file=os.path.join(state_dir, "main.db"))
    side.start()
    wait_points(side, "/api/v1/pod/" + metrics_ns, 3)
    yield side
    side.stop()


@pytest.fixture(scope="package")
def metrics_gateway(cluster, sidecar):
    gw = Gateway.start(cluster, "--sidecar-host", sidecar.url,
                       "--metric-client-check-period", "0.5s")
    yield gw
    gw.stop()
