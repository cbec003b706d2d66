"""The pipeline's small parts without a cluster: the single-flight helper, and the metrics
decorator joining over the related objects the list already read (no LIST of its own)."""

import asyncio

import pytest
import ujson

from dashboard_api.kinds import table as kinds
from dashboard_api.metrics.lists import MetricsDecorator
from dashboard_api.query.listquery import Query
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.singleflight import SingleFlight
from dashboard_api.summaries.related import Related


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_single_flight_runs_identical_work_once_and_forgets_it():
    async def scenario():
        flights, started = SingleFlight(), []

        async def work():
            started.append(1)
            await asyncio.sleep(0.01)
            return len(started)
        first = await asyncio.gather(*(flights.run("k", work) for _ in range(5)))
        assert first == [1] * 5 and len(flights) == 0
        assert await flights.run("k", work) == 2   # a finished run is not remembered
        assert await flights.run("other", work) == 3
    run(scenario())


def test_single_flight_survives_a_caller_that_goes_away_and_shares_errors():
    async def scenario():
        flights = SingleFlight()
        release = asyncio.Event()

        async def work():
            await release.wait()
            return "done"
        gone = asyncio.ensure_future(flights.run("k", work))
        stays = asyncio.ensure_future(flights.run("k", work))
        await asyncio.sleep(0)
        gone.cancel()
        release.set()
        assert await stays == "done"

        async def failing():
            raise ApiError(500, "boom")
        results = await asyncio.gather(flights.run("f", failing), flights.run("f", failing),
                                       return_exceptions=True)
        assert all(isinstance(r, ApiError) for r in results)
    run(scenario())


class Sidecar:
    healthy = True
    last_error = None

    def __init__(self):
        self.asked = []

    async def get(self, path):
        self.asked.append(path)
        pods = path.split("/pod-list/")[1].split("/")[0].split(",")
        return 200, ujson.dumps({"items": [
            {"uids": [p], "dataPoints": [{"x": 60, "y": 2}]} for p in pods]})


class NoReads:
    """A Fetch that fails any read: the decorator must use what the list read."""
    refused = {}

    def __init__(self):
        self.promised = {}
        self.unversioned = False

    def __getattr__(self, name):
        raise AssertionError("the metrics decorator read %s" % name)


def _obj(kind, name, uid, owner=None):
    meta = {"name": name, "namespace": "ns", "uid": uid}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "controller": True}]
    return {"kind": kind, "metadata": meta}


@pytest.mark.parametrize("name", ["deployment", "replicaset"])
def test_workload_metrics_join_over_the_lists_related_objects(name):
    kind = kinds.get(name)
    rel = Related(pods=[_obj("Pod", "p1", "p1", "rs"), _obj("Pod", "p2", "p2", "rs"),
                        _obj("Pod", "p3", "p3", "other")],
                  replicasets=[_obj("ReplicaSet", "rs", "rs", "d")], events=[])
    owner_uid = "d" if name == "deployment" else "rs"
    page = [{"objectMeta": {"name": "w", "namespace": "ns", "uid": owner_uid}}]
    envelope = {}
    sidecar = Sidecar()
    run(MetricsDecorator(sidecar)(NoReads(), kind, page, envelope, Query(
        metric_names=("cpu/usage",)), rel))
    assert page[0]["metrics"]["cpu/usage"]["label"] == {
        "namespace": ["ns"], "pod": ["p1", "p2"], name: ["w"]}
    assert len(sidecar.asked) == 1 and "p3" not in sidecar.asked[0]
    assert envelope["cumulativeMetrics"]


def test_a_refused_related_read_is_the_metrics_warning():
    kind = kinds.get("replicaset")
    fetch = NoReads()
    fetch.refused = {"pods": ApiError(403, "pods is forbidden", "Forbidden")}
    page = [{"objectMeta": {"name": "w", "namespace": "ns", "uid": "rs"}}]
    envelope = {}
    run(MetricsDecorator(Sidecar())(fetch, kind, page, envelope,
                                    Query(metric_names=("cpu/usage",)), Related()))
    assert page[0]["metrics"] is None
    assert envelope["warning"] == ("the pods of these replicaset objects cannot be read: "
                                   "pods is forbidden")


def test_a_pages_related_reads_are_authorized_beside_its_own_rows():
    """A page whose answers are not known waits for one round of reviews: the related reads'
    reviews (the pods' events) start before the list's own rows are read and authorized
    (lists/fetch.py ``authorize_beside``), not after them."""
    from dashboard_api.kubeapi.discovery import Resource
    from dashboard_api.lists.pipeline import Pipeline
    from dashboard_api.query.reads import ALL

    served = {r.plural: r for r in (Resource("", "v1", "pods", "Pod", True, ()),
                                    Resource("", "v1", "events", "Event", True, ()))}

    class Discovery:
        async def resolve(self, handle, group, plural, versions=()):
            return served[plural]

    class Source:
        def __init__(self):
            self.seen = []

        def authorize_beside(self, fetch, resource, namespaces):
            self.seen.append(("beside", resource.plural))

        async def rows(self, fetch, kind, resource, namespaces):
            self.seen.append(("rows", resource.plural))
            raise ApiError(404, "stop here")

    source = Source()
    pipeline = Pipeline(source)
    fetch = pipeline.fetch(type("Handle", (), {"token": "t", "impersonation": None})(),
                           type("Cluster", (), {"discovery": Discovery()})())
    with pytest.raises(ApiError):
        run(pipeline.list_kind(fetch, kinds.get("pod"), ALL, Query()))
    assert source.seen == [("beside", "events"), ("rows", "pods")]
    source.seen.clear()
    with pytest.raises(ApiError):   # a live page's subscription compares the same road
        run(pipeline.validator(fetch, kinds.get("pod"), ALL, Query()))
    assert source.seen == [("beside", "events"), ("rows", "pods")]
