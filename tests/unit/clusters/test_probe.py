"""The probe behind GET /api/v1/clusters (clusters/probe.py): started on demand, answering at
once with what is known, at most one probe per period, a cluster that does not answer within
the deadline unreachable, no probe without a service identity; and the <base> the gateway
writes into a cluster's index page (handlers/static.py)."""

import asyncio

from dashboard_api.clusters.probe import Probe
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.paths import base_path, split_path
from dashboard_api.web import picker as picker_page
from dashboard_api.web.pages import with_base


class Answer:
    def __init__(self, status, data):
        self.status, self.data = status, data

    def json(self):
        import json
        return json.loads(self.data)


class Api:
    """A cluster.Cluster stand-in: ``behaviour`` is what its service handle's call does."""

    def __init__(self, behaviour, identity=True):
        self.behaviour = behaviour
        self.identity = identity
        self.calls = []
        self.config = type("Config", (), {"host": "https://api.test:6443"})()

    def service_handle(self):
        if not self.identity:
            raise ApiError(500, "the service has no identity of its own in proxy mode")
        return self

    async def call(self, method, path, timeout=None, decode=False):
        self.calls.append((method, path, timeout))
        return await self.behaviour(timeout)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_an_answer_makes_it_reachable_with_its_version():
    async def answers(timeout):
        return Answer(200, b'{"gitVersion": "v1.20.2"}')

    async def main():
        clock = Clock()
        probe = Probe(Api(answers), clock=clock, period=30, deadline=3)
        probe.refresh()
        assert (probe.version, probe.reachable) == (None, None)   # nothing waited for
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert (probe.version, probe.reachable) == ("v1.20.2", True)
        assert probe.api.calls == [("GET", "/version", 3)]
        probe.refresh()            # within the period: not asked again
        clock.now += 29
        probe.refresh()
        await asyncio.sleep(0)
        assert len(probe.api.calls) == 1
        clock.now += 1
        probe.refresh()
        await asyncio.sleep(0)
        assert len(probe.api.calls) == 2
    asyncio.run(main())


def test_a_cluster_that_does_not_answer_is_unreachable_and_asked_once_at_a_time():
    async def hangs(timeout):
        await asyncio.sleep(timeout)   # the client's deadline ends it
        raise ApiError(504, "no answer within %ss" % timeout)

    async def main():
        clock = Clock()
        probe = Probe(Api(hangs), clock=clock, period=30, deadline=0.05)
        probe.refresh()
        clock.now += 60
        probe.refresh()            # one still runs: no second one
        await asyncio.sleep(0)
        assert len(probe.api.calls) == 1 and probe.reachable is None
        await asyncio.sleep(0.2)
        assert probe.reachable is False and probe.version is None
    asyncio.run(main())


def test_any_http_answer_is_reachable_and_none_is_asked_without_an_identity():
    async def refuses(timeout):
        return Answer(403, b'{"kind": "Status"}')

    async def main():
        probe = Probe(Api(refuses))
        probe.refresh()
        await asyncio.sleep(0.01)
        assert (probe.reachable, probe.version) == (True, None)
        proxy = Probe(Api(refuses, identity=False))
        proxy.refresh()
        await asyncio.sleep(0.01)
        assert proxy.reachable is None and proxy.api.calls == []
        # What a caller's own GET /version of the cluster said counts too.
        proxy.answered({"gitVersion": "v1.21.0"})
        assert (proxy.reachable, proxy.version) == (True, "v1.21.0")
    asyncio.run(main())


def test_paths_and_the_base_of_an_index():
    assert base_path(None) == "/" and base_path("b") == "/clusters/b/"
    assert split_path("/clusters/b") == ("b", "/")
    # A name with ':' or '@' (an EKS context) is found however a link spells it.
    assert split_path("/clusters/arn%3Aaws%40x/api/v1/pod") == ("arn:aws@x", "/api/v1/pod")
    assert split_path("/clusters/arn:aws@x/") == ("arn:aws@x", "/")


def test_the_picker_links_a_name_as_its_path_spells_it():
    cluster = type("C", (), {"name": "arn:aws:eks:x:cluster-prod", "default": False})()
    ctx = type("Ctx", (), {"clusters": [cluster]})()
    assert b'href="/clusters/arn:aws:eks:x:cluster-prod/"' in picker_page.page(ctx)
    assert with_base(b"<!doctype html><html><HEAD lang=en><title>x</title></head></html>",
                     "/clusters/b/") == \
        b'<!doctype html><html><HEAD lang=en><base href="/clusters/b/"><title>x</title>' \
        b'</head></html>'
    # No <head> tag: after the doctype (the parser opens the head for it); <header> is no head.
    assert with_base(b"<!DOCTYPE html>\n<header>h</header>", "/clusters/b/") == \
        b'<!DOCTYPE html><base href="/clusters/b/">\n<header>h</header>'
    assert with_base(b"<p>x</p>", '/clusters/"b/') == b'<base href="/clusters/&quot;b/"><p>x</p>'
