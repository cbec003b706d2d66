"""The default source of raw objects: chunked LIST with limit/continue, per-namespace fan-out.
Runs the listing code in-process against the local cluster (no gateway)."""

import asyncio

import pytest

from dashboard_api.app import options
from dashboard_api.kinds import table as kinds
from dashboard_api.kubeapi import config as cluster_config
from dashboard_api.kubeapi.client import Cluster
from dashboard_api.lists.fetch import Fetch
from dashboard_api.lists.passthrough import ChunkedList, ListSlots
from dashboard_api.lists.pipeline import Pipeline
from dashboard_api.query import page as query_page
from dashboard_api.query.listquery import Query
from dashboard_api.query.reads import Namespaces
from dashboard_api.serving.errors import ApiError
from tests.resources import kube


class CountingHandle:
    """The real handle, counting its GETs."""

    def __init__(self, handle):
        self.handle = handle
        self.gets = []

    token = property(lambda self: self.handle.token)
    impersonation = property(lambda self: self.handle.impersonation)

    async def get_page(self, path, params, transform):
        self.gets.append((path, dict(params or {})))
        return await self.handle.get_page(path, params, transform)

    async def get(self, path, params=None):
        return await self.handle.get(path, params)  # discovery


class ExpiringHandle(CountingHandle):
    """The real handle, except that its first continue call answers 410 Gone, as the API server
    does once etcd has compacted the revision behind the token."""

    async def get_page(self, path, params, transform):
        if "continue" in (params or {}) and not any("continue" in p for _, p in self.gets):
            self.gets.append((path, dict(params)))
            raise ApiError(410, "The provided continue parameter is too old", "Expired")
        return await super().get_page(path, params, transform)


def real_cluster(cluster):
    return Cluster(cluster_config.load(options.parse(
        ["--apiserver-host", cluster.url, "--apiserver-ca-bundle", cluster.ca_file])))


async def list_pods(cluster, token, namespaces, chunk, labels=None, wrap=CountingHandle):
    real = real_cluster(cluster)
    try:
        handle = real.handle(token)
        resource = await real.discovery.resolve(handle, "", "pods", ("v1",))
        counting = wrap(handle)
        source = ChunkedList(chunk)
        fetch = Fetch(counting, real, source)
        try:
            items = await source.list(fetch, resource, namespaces, labels)
        finally:
            fetch.close()
        return items, counting.gets
    finally:
        real.executor.shutdown()


def pending_pods(cluster, namespace, count):
    for i in range(count):
        kube.pod(cluster, namespace, "p%d" % i, labels={"app": "x", "n": str(i % 2)},
                 nodeName="no-such-node")


# The budget includes the blocking pod creations that run on the loop before the lists.
@pytest.mark.gen_test(timeout=60)
async def test_chunked_list_follows_continue(cluster, namespace, other_namespace, admin_token):
    pending_pods(cluster, namespace, 5)
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


@pytest.mark.gen_test(timeout=60)
async def test_expired_continue_lists_again_in_one_piece(cluster, namespace, admin_token):
    pending_pods(cluster, namespace, 5)

    items, gets = await list_pods(cluster, admin_token, Namespaces.one(namespace), chunk=2,
                                  labels="app=x", wrap=ExpiringHandle)
    assert sorted(p["metadata"]["name"] for p in items) == ["p0", "p1", "p2", "p3", "p4"]
    # First chunk, the continue call that got 410, then the restart without limit/continue.
    assert len(gets) == 3 and gets[1][1]["continue"]
    assert gets[2][1] == {"labelSelector": "app=x"}


@pytest.mark.gen_test(timeout=60)
async def test_long_lists_are_summarised_in_the_executor(cluster, namespace, admin_token,
                                                         monkeypatch):
    pending_pods(cluster, namespace, 5)
    real = real_cluster(cluster)
    ran = []
    run = real.executor.run

    async def counting_run(fn, *args, **kwargs):
        ran.append(fn)
        return await run(fn, *args, **kwargs)

    monkeypatch.setattr(real.executor, "run", counting_run)
    query = Query(sorts=[("name", False)], items_per_page=3, page=1)

    async def pod_list():
        pipeline = Pipeline(ChunkedList())
        fetch = pipeline.fetch(real.handle(admin_token), real)
        return await pipeline.list_kind(fetch, kinds.get("pod"), Namespaces.one(namespace),
                                        query)

    try:
        on_loop = await pod_list()
        assert query_page.select not in ran
        monkeypatch.setattr(query_page, "OFF_LOOP_ROWS", 1)
        off_loop = await pod_list()
    finally:
        real.shutdown()
    assert ran.count(query_page.select) == 1
    assert off_loop == on_loop
    assert on_loop["listMeta"]["totalItems"] == 5 and on_loop["status"]["pending"] == 5
    assert [p["objectMeta"]["name"] for p in on_loop["pods"]] == ["p4", "p3", "p2"]


@pytest.mark.gen_test(timeout=60)
async def test_identical_lists_of_one_caller_share_one_list(cluster, namespace, admin_token):
    pending_pods(cluster, namespace, 5)
    real = real_cluster(cluster)
    try:
        handle = real.handle(admin_token)
        resource = await real.discovery.resolve(handle, "", "pods", ("v1",))
        counting = CountingHandle(handle)
        source = ChunkedList(2, slots=ListSlots(4))
        fetches = [Fetch(counting, real, source) for _ in range(4)]
        results = await asyncio.gather(*(source.list(f, resource, Namespaces.one(namespace))
                                          for f in fetches))
        for f in fetches:
            f.close()
    finally:
        real.shutdown()
    assert all(len(r) == 5 for r in results)
    assert len(counting.gets) == 3  # one chunked LIST (3 pages), not four


@pytest.mark.gen_test(timeout=60)
async def test_large_lists_wait_for_a_slot_then_get_503(cluster, namespace, admin_token):
    pending_pods(cluster, namespace, 5)
    real = real_cluster(cluster)
    try:
        admin = real.handle(admin_token)
        resource = await real.discovery.resolve(admin, "", "pods", ("v1",))
        source = ChunkedList(2, slots=ListSlots(1, wait=0.3))
        holder = Fetch(admin, real, source)
        assert len(await source.list(holder, resource, Namespaces.one(namespace))) == 5
        # The first request still holds the only slot: another caller's long list waits, then
        # is refused with a 503 that says when to retry.
        other = Fetch(real.handle(admin_token, {"Impersonate-User": "other",
                                                        "Impersonate-Group": "system:masters"}),
                              real, source)
        with pytest.raises(ApiError) as refused:
            await source.list(other, resource, Namespaces.one(namespace))
        assert refused.value.code == 503 and refused.value.headers["Retry-After"]
        # A list of one chunk needs no slot.
        short = await source.list(Fetch(admin, real, source), resource,
                                  Namespaces.one(namespace), fields="metadata.name=p1")
        assert [p["metadata"]["name"] for p in short] == ["p1"]
        holder.close()  # the request ended: its slot is free again
        again = Fetch(admin, real, source)
        assert len(await source.list(again, resource, Namespaces.one(namespace))) == 5
        again.close()
    finally:
        real.shutdown()


@pytest.mark.gen_test(timeout=60)
async def test_a_request_that_ends_early_leaves_no_slot_taken(cluster, namespace, admin_token):
    """A client that goes away while its long list is being read: the LIST finishes (others
    may share it) but no slot stays taken, so later requests are served."""
    pending_pods(cluster, namespace, 5)
    real = real_cluster(cluster)
    try:
        admin = real.handle(admin_token)
        resource = await real.discovery.resolve(admin, "", "pods", ("v1",))
        source = ChunkedList(2, slots=ListSlots(1, wait=0.5))
        gone = Fetch(admin, real, source)
        reading = asyncio.ensure_future(source.list(gone, resource, Namespaces.one(namespace)))
        await asyncio.sleep(0)
        gone.close()  # the connection closed before the list was read
        assert len(await reading) == 5
        for _ in range(3):
            later = Fetch(admin, real, source)
            assert len(await source.list(later, resource, Namespaces.one(namespace))) == 5
            later.close()
    finally:
        real.shutdown()


@pytest.mark.gen_test(timeout=60)
async def test_identical_list_requests_of_one_caller_get_one_answer(cluster, namespace,
                                                                     admin_token):
    pending_pods(cluster, namespace, 5)
    real = real_cluster(cluster)
    try:
        counting = CountingHandle(real.handle(admin_token))
        query = Query(sorts=[("name", True)], items_per_page=2)
        # Sources of their own: only the pipeline's coalescing can make the four one LIST.
        pipeline = Pipeline(ChunkedList(2))
        fetches = [Fetch(counting, real, ChunkedList(2)) for _ in range(4)]
        answers = await asyncio.gather(*(
            pipeline.list_kind(f, kinds.get("pod"), Namespaces.one(namespace), query)
            for f in fetches))
        other = await pipeline.list_kind(Fetch(counting, real, ChunkedList(2)),
                                         kinds.get("pod"), Namespaces.one(namespace),
                                         Query(sorts=[("name", True)], items_per_page=3))
        for f in fetches:
            f.close()
    finally:
        real.shutdown()
    assert all(a is answers[0] for a in answers)
    assert [p["objectMeta"]["name"] for p in answers[0]["pods"]] == ["p0", "p1"]
    assert len(other["pods"]) == 3  # another query is another answer
    pod_lists = [p for p, _ in counting.gets if p.endswith("/pods")]
    assert len(pod_lists) == 2 * 3  # one chunked LIST (3 pages) per distinct request
