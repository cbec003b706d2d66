"""The default source of raw objects: chunked LIST with limit/continue, per-namespace fan-out.
Runs the listing code in-process against the local cluster (no gateway)."""

import pytest

from dashboard_api import options
from dashboard_api.cluster import Cluster
from dashboard_api.cluster import config as cluster_config
from dashboard_api.listing import ChunkedList
from dashboard_api.reads import Namespaces
from tests.resources import kube


class CountingHandle:
    """The real handle, counting its GETs."""

    def __init__(self, handle):
        self.handle = handle
        self.gets = []

    async def get(self, path, params=None):
        self.gets.append((path, dict(params or {})))
        return await self.handle.get(path, params)


async def list_pods(cluster, token, namespaces, chunk, labels=None):
    real = Cluster(cluster_config.load(options.parse(
        ["--apiserver-host", cluster.url, "--apiserver-ca-bundle", cluster.ca_file])))
    try:
        handle = real.handle(token)
        resource = await real.discovery.resolve(handle, "", "pods", ("v1",))
        counting = CountingHandle(handle)
        items = await ChunkedList(chunk).list(counting, resource, namespaces, labels)
        return items, counting.gets
    finally:
        real.executor.shutdown()


# The budget includes the blocking pod creations that run on the loop before the lists.
@pytest.mark.gen_test(timeout=60)
async def test_chunked_list_follows_continue(cluster, namespace, other_namespace, admin_token):
    for i in range(5):
        kube.pod(cluster, namespace, "p%d" % i, labels={"app": "x", "n": str(i % 2)},
                 nodeName="no-such-node")
    kube.pod(cluster, other_namespace, "q", labels={"app": "x", "n": "1"},
             nodeName="no-such-node")

    items, gets = await list_pods(cluster, admin_token, Namespaces.one(namespace), chunk=2)
    assert sorted(p["metadata"]["name"] for p in items) == ["p0", "p1", "p2", "p3", "p4"]
    assert len(gets) == 3 and all(params["limit"] == 2 for _, params in gets)
    assert "continue" not in gets[0][1] and gets[1][1]["continue"] and gets[2][1]["continue"]

    items, gets = await list_pods(cluster, admin_token,
                                  Namespaces.parse("%s,%s" % (namespace, other_namespace)),
                                  chunk=2, labels="n=1")
    assert sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in items) == sorted(
        [(namespace, "p1"), (namespace, "p3"), (other_namespace, "q")])
    assert {path for path, _ in gets} == {"/api/v1/namespaces/%s/pods" % namespace,
                                          "/api/v1/namespaces/%s/pods" % other_namespace}
    assert all(params["labelSelector"] == "n=1" for _, params in gets)
