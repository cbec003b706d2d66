"""One gateway, two clusters (issue 28): the session's shared local cluster as "alpha" (the
kubeconfig's current context, so the default one, served at the root too) and a second local
cluster of this package's own as "beta", each with objects and tokens of its own, named by the
contexts of one kubeconfig file given to the gateway with --kubeconfig.

Every cluster is seeded with a namespace only it has, holding a configmap, a pod with a shell
(its logs written by the node simulator), a deployment and an event, all named after the
cluster, so that an answer shows which cluster it came from."""

import contextlib
import os
import secrets

import pytest

from tests.cluster import users
from tests.cluster.controlplane import ClusterStartError, LocalCluster
from tests.resources import kube
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for
from tests.terminal.conftest import CONTAINER, create_pods

POD = "shell"          # nginx: has bash (tests/terminal/conftest.py)
DEPLOYMENT = "web"
CONFIGMAP = "own-settings"


class Seeded:
    """What one cluster holds for these tests: ``name`` (its context), ``cluster``,
    ``token`` (its admin's), ``namespace`` (only this cluster has it), ``nodes``."""

    def __init__(self, name, cluster):
        self.name, self.cluster, self.token = name, cluster, cluster.admin_token
        self.namespace = cluster.new_namespace(name + "-only")
        self.nodes = cluster.node_count
        ns = self.namespace
        create_pods(cluster, ns, {POD: "nginx:1.19"})
        cm = kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % ns, {
            "metadata": {"name": CONFIGMAP}, "data": {"cluster": name}})
        kube.event(cluster, ns, "seeded-" + name, kube.involved(cm, "ConfigMap"),
                   "Seeded" + name.capitalize(), "seeded on " + name)
        kube.apps(cluster, ns, "deployments", DEPLOYMENT, {"app": DEPLOYMENT})

    def delete(self):
        self.cluster.request("DELETE", "/api/v1/namespaces/" + self.namespace)


@pytest.fixture(scope="package")
def beta_cluster():
    """A second local cluster (one node): its own etcd, API server, CA and tokens."""
    try:
        local = LocalCluster.start(nodes=1)
    except ClusterStartError as e:
        pytest.fail("second local cluster did not start: %s" % e, pytrace=False)
    yield local
    local.stop()


@pytest.fixture(scope="package")
def alpha(cluster):
    seeded = Seeded("alpha", cluster)
    yield seeded
    seeded.delete()


@pytest.fixture(scope="package")
def beta(beta_cluster):
    seeded = Seeded("beta", beta_cluster)
    yield seeded
    seeded.delete()


def write_kubeconfig(path, current="alpha", **servers):
    """``path``: a kubeconfig whose contexts are ``servers`` (name -> (Seeded or LocalCluster,
    server URL or None for the cluster's own)), each with that cluster's CA and admin token."""
    contexts = {}
    for name, (target, server) in servers.items():
        local = getattr(target, "cluster", target)
        contexts[name] = (server or local.url, local.ca_file, "admin", local.admin_token)
    users.write_contexts(path, contexts, current)
    return path


def replace_kubeconfig(path, **kw):
    """Rewrites ``path`` at once (a rename), as a configuration tool or a mounted Secret's
    update would: the gateway never reads half a file."""
    write_kubeconfig(path + ".new", **kw)
    os.replace(path + ".new", path)


def start_gateway(kubeconfig, *args):
    """A gateway serving every context of ``kubeconfig`` (nothing else says where clusters
    are), HTTP on 127.0.0.1."""
    return Gateway.start(None, "--kubeconfig", kubeconfig, *args, kubeconfig=False)


def pod_names(gw, seeded, timeout=30):
    """Waits until the pod list of ``seeded``'s namespace under ``gw`` shows its pod (the
    cluster's watch cache has synced it); returns the names listed."""
    def listed():
        reply = gw.get("/api/v1/pod/" + seeded.namespace, token=seeded.token)
        assert reply.status in (200, 503), reply   # 503: the cache still syncing
        names = {p["objectMeta"]["name"] for p in (reply.json().get("pods") or [])} \
            if reply.status == 200 else set()
        return names if POD in names else None
    return wait_for(listed, timeout=timeout, interval=0.2,
                    what="pod %s listed on %s" % (POD, gw.url))


@contextlib.contextmanager
def serving(kubeconfig, seeded, *args):
    """``start_gateway(kubeconfig, *args)``, given once each cluster of ``seeded`` lists its
    pod there; stopped on leaving. Every cluster's cache is asked for first (a cache starts on
    first use), so that they sync together rather than one after another."""
    gw = start_gateway(kubeconfig, *args)
    try:
        for each in seeded:
            gw.get("/clusters/%s/api/v1/pod/%s" % (each.name, each.namespace), token=each.token)
        for each in seeded:
            pod_names(gw.at("/clusters/" + each.name), each)
        yield gw
    finally:
        gw.stop()


@pytest.fixture(scope="package")
def settings_namespace(alpha, beta):
    """A namespace of the same name on both clusters: the gateway's --namespace, where each
    cluster keeps its own settings ConfigMap."""
    name = "settings-" + secrets.token_hex(3)
    for seeded in (alpha, beta):
        kube.create(seeded.cluster, "/api/v1/namespaces", {"metadata": {"name": name}})
    yield name
    for seeded in (alpha, beta):
        seeded.cluster.request("DELETE", "/api/v1/namespaces/" + name)


@pytest.fixture(scope="package")
def two_clusters(alpha, beta, settings_namespace, tmp_path_factory):
    """The package's gateway: alpha and beta straight (no proxy), both synced."""
    path = str(tmp_path_factory.mktemp("clusters") / "kubeconfig")
    write_kubeconfig(path, alpha=(alpha, None), beta=(beta, None))
    with serving(path, (alpha, beta), "--namespace", settings_namespace) as gw:
        yield gw


__all__ = ["CONTAINER", "DEPLOYMENT", "CONFIGMAP", "POD", "Seeded", "pod_names",
           "replace_kubeconfig", "serving", "start_gateway", "write_kubeconfig"]
