"""lists/fetch.Fetch.gather: the lists the cache answers are read in line, without a step of the
event loop (under load a step is every other request's work: issue #38), the others
concurrently; a kind the server lacks reads as empty as before."""

import asyncio

from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists.fetch import Fetch
from dashboard_api.query.reads import ALL, Need
from dashboard_api.serving.errors import ApiError
from dashboard_api.summaries.related import Related

PODS = Resource("", "v1", "pods", "Pod", True, ())
EVENTS = Resource("", "v1", "events", "Event", True, ())
GONE = Resource("gone.example.com", "v1", "gones", "Gone", True, ())


class Source:
    """Pods from the cache (answered at once), events through the API server (a wait)."""

    def __init__(self):
        self.running = 0
        self.most_running = 0

    def answers_at_once(self, fetch, resource, namespaces):
        return resource is PODS

    async def list(self, fetch, resource, namespaces, labels, fields):
        if resource is GONE:
            raise ApiError(404, "the server could not find the requested resource")
        if resource is PODS:
            return ["pod"]
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        return ["event"]


def steps_taken(coroutine):
    """(the coroutine's result, the loop steps it took)."""
    async def counted():
        steps = [0]
        loop = asyncio.get_running_loop()

        def tick():
            steps[0] += 1
            handle[0] = loop.call_soon(tick)
        handle = [loop.call_soon(tick)]
        result = await coroutine
        handle[0].cancel()
        return result, steps[0]
    return asyncio.run(counted())


def test_lists_the_cache_answers_take_no_step_of_the_loop():
    fetch, rel = Fetch(None, None, Source()), Related()
    needs = [Need("pods", PODS, ALL), Need("pods2", PODS, ALL)]
    result, steps = steps_taken(fetch.gather(needs, rel))
    assert steps == 0
    assert result["pods"] == ["pod"] and result["pods2"] == ["pod"]


def test_the_others_are_read_concurrently_and_a_kind_not_served_reads_as_empty():
    source = Source()
    fetch, rel = Fetch(None, None, source), Related()
    needs = [Need("pods", PODS, ALL), Need("events", EVENTS, ALL),
             Need("events2", EVENTS, ALL), Need("gone", GONE, ALL)]
    result, _ = steps_taken(fetch.gather(needs, rel))
    assert result["pods"] == ["pod"] and result["events"] == result["events2"] == ["event"]
    assert result["gone"] == []
    assert source.most_running == 2


class Discovery:
    async def resolve(self, handle, group, plural, versions=()):
        for resource in (PODS, EVENTS):
            if resource.plural == plural:
                return resource
        raise ApiError(404, "the server could not find the requested resource")


class Beside:
    """A source that notes the reads whose reviews are started early."""

    def __init__(self):
        self.beside = []

    def authorize_beside(self, fetch, resource, namespaces):
        self.beside.append((resource.plural, namespaces))


def test_authorize_beside_starts_the_list_reads_reviews_without_a_step():
    source = Beside()
    cluster = type("Cluster", (), {"discovery": Discovery()})()
    fetch = Fetch(None, cluster, source)
    needs = [Need("events", "event", ALL), Need("owner", "pod", ALL, name="p"),
             Need("gone", type("Kind", (), {"group": "x", "plural": "gones",
                                           "versions": ()})(), ALL)]
    _, steps = steps_taken(fetch.authorize_beside(needs))
    assert steps == 0   # nothing waited for: the reviews run in the background
    assert source.beside == [("events", ALL)]   # not the object read, nor a kind not served
    # a source that authorizes nothing itself (the pass-through: the API server does)
    assert steps_taken(Fetch(None, cluster, Source()).authorize_beside(needs))[1] == 0
