"""A reflector stopped (its cluster let go when idle, removed or changed: clusters/context.py)
closes its watch's connection at once, not when the API server ends the watch minutes later
(meanwhile the connection stays open and its events still reach a store nobody reads), and
without an error in the log.

A local Tornado server streaming an endless response stands in for the API server's watch."""

import asyncio
import gc
import json
import logging
import time

import tornado.httpserver
import tornado.netutil
import tornado.web

from dashboard_api.kubeapi import watch

WAIT = 5.0


class Consumer:
    def __init__(self):
        self.states = []

    def state(self, name, since=None):
        self.states.append(name)


class FakeCluster:
    """What Reflector.watch reads of a cluster.Cluster."""

    connect_timeout = 5

    def __init__(self, url):
        self.base = url
        self.config = type("Config", (), {"service_headers": lambda _self: {}})()

    def url(self, path, query):
        return self.base + path


class Resource:
    def path(self):
        return "/watch"


def test_stop_closes_the_watch_connection_quietly(monkeypatch, caplog):
    monkeypatch.setattr(watch, "service_ssl_context", lambda config: None)

    async def scenario():
        opened, closed = asyncio.Event(), asyncio.Event()

        class Endless(tornado.web.RequestHandler):
            async def get(self):
                self.write("\n")
                await self.flush()
                opened.set()
                await asyncio.wait_for(closed.wait(), 30)

            def on_connection_close(self):
                closed.set()

        [sock] = tornado.netutil.bind_sockets(0, "127.0.0.1")
        server = tornado.httpserver.HTTPServer(tornado.web.Application([("/watch", Endless)]))
        server.add_sockets([sock])
        consumer = Consumer()
        reflector = watch.Reflector(FakeCluster("http://127.0.0.1:%d" % sock.getsockname()[1]),
                                    Resource(), None, consumer)
        reflector._task = asyncio.ensure_future(reflector.watch("1"))
        await asyncio.wait_for(opened.wait(), WAIT)
        # The server has sent its headers; the client reads them on its next turn of the loop.
        for _ in range(int(WAIT / 0.01)):
            if consumer.states:
                break
            await asyncio.sleep(0.01)
        assert consumer.states == ["synced"]  # the watch is established
        reflector.stop()
        await asyncio.wait_for(closed.wait(), WAIT)  # the server saw the connection close
        await asyncio.sleep(0.1)
        assert reflector._task.cancelled()
        server.stop()

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())
        gc.collect()  # a future whose failure nobody took is logged when collected
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert errors == []


class Executor:
    async def run(self, fn, *args):
        return fn(*args)


class Applying(Consumer):
    """A consumer that notes the events applied and when the reflector said it caught up."""

    def __init__(self):
        super().__init__()
        self.applied = []
        self.caught_at = None

    def apply(self, kind, row, version):
        self.applied.append(version)

    def caught_up(self):
        self.caught_at = len(self.applied)


def _serve(lines, hold):
    """A watch endpoint that writes ``lines`` (several chunks) and then holds the connection
    until ``hold`` is set."""
    class Backlog(tornado.web.RequestHandler):
        async def get(self):
            await self.flush()   # the headers, as the API server sends them at once
            for at in range(0, len(lines), 50):
                self.write("".join(lines[at:at + 50]))
                await self.flush()
            await asyncio.wait_for(hold.wait(), 30)

    [sock] = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server = tornado.httpserver.HTTPServer(tornado.web.Application([("/watch", Backlog)]))
    server.add_sockets([sock])
    return server, "http://127.0.0.1:%d" % sock.getsockname()[1]


def _event(version):
    return '{"type":"MODIFIED","object":{"metadata":{"name":"p%d","resourceVersion":"%d"}}}\n' % (
        version, version)


def test_the_first_watch_catches_up_once_its_backlog_is_applied(monkeypatch):
    """What changed during the first LIST arrives at once when the watch starts: readiness
    waits until all of it is applied (cache/watchcache.py Cached.settled), once."""
    monkeypatch.setattr(watch, "service_ssl_context", lambda config: None)
    monkeypatch.setattr(watch, "EVENT_BATCH", 16)

    async def scenario():
        hold = asyncio.Event()
        server, url = _serve([_event(v) for v in range(1, 501)], hold)
        cluster = FakeCluster(url)
        cluster.executor = Executor()
        consumer = Applying()
        reflector = watch.Reflector(cluster, Resource(), lambda obj: obj, consumer,
                                    decode=lambda raw: json.loads(bytes(raw)))
        task = asyncio.ensure_future(reflector.watch("0"))
        for _ in range(int(WAIT / 0.01)):
            if consumer.caught_at is not None:
                break
            await asyncio.sleep(0.01)
        assert consumer.caught_at == 500 and consumer.applied[-1] == "500"
        assert reflector.caught_up
        hold.set()
        await asyncio.wait_for(task, WAIT)
        reflector.stop()
        server.stop()

    asyncio.run(scenario())


def test_a_quiet_first_watch_is_caught_up_soon_after_it_began(monkeypatch):
    monkeypatch.setattr(watch, "service_ssl_context", lambda config: None)

    async def scenario():
        hold = asyncio.Event()
        server, url = _serve([], hold)
        cluster = FakeCluster(url)
        cluster.executor = Executor()
        consumer = Applying()
        reflector = watch.Reflector(cluster, Resource(), lambda obj: obj, consumer)
        task = asyncio.ensure_future(reflector.watch("0"))
        for _ in range(int(WAIT / 0.01)):
            if consumer.caught_at is not None:
                break
            await asyncio.sleep(0.01)
        assert consumer.caught_at == 0 and consumer.states == ["synced"]
        hold.set()
        await asyncio.wait_for(task, WAIT)
        reflector.stop()
        server.stop()

    asyncio.run(scenario())


class Paging:
    """A cluster whose LIST answers ``pages`` pages of ``size`` objects each, and whose
    executor notes how many jobs run at once (with every other Paging's: ``counts``)."""

    def __init__(self, counts, pages, size):
        self.counts, self.pages, self.size = counts, pages, size
        self.executor = self

    def service_handle(self):
        return self

    async def call(self, method, path, params):
        at = int(params.get("continue", 0))
        meta = {"resourceVersion": "7"}
        if at + 1 < self.pages:
            meta["continue"] = str(at + 1)
        items = [{"metadata": {"name": "o%d-%d" % (at, k)}} for k in range(self.size)]
        data = json.dumps({"metadata": meta, "items": items}).encode()
        return type("Response", (), {"status": 200, "data": data})()

    async def run(self, fn, *args):
        self.counts["now"] += 1
        self.counts["most"] = max(self.counts["most"], self.counts["now"])
        try:
            return await asyncio.get_running_loop().run_in_executor(None, fn, *args)
        finally:
            self.counts["now"] -= 1


class Listing(Consumer):
    def __init__(self):
        super().__init__()
        self.rows = None

    async def relist(self, rows, version, run):
        self.rows = rows


def test_list_pages_of_every_cluster_are_bounded_background_jobs(monkeypatch):
    """Two clusters' LISTs at once (as every kind's after a forced re-list): their pages'
    decoding and rows are never more jobs at once than the process's bound, and every row
    arrives in order."""
    monkeypatch.setattr(watch, "BACKGROUND", watch.BACKGROUND.__class__(2))

    def slow_row(obj):
        time.sleep(0.002)
        return obj["metadata"]["name"]

    async def scenario():
        counts = {"now": 0, "most": 0}
        consumers = [Listing() for _ in range(3)]
        reflectors = [watch.Reflector(Paging(counts, pages=6, size=5), Resource(), slow_row,
                                      consumer, decode=lambda raw: json.loads(bytes(raw)))
                      for consumer in consumers]
        versions = await asyncio.wait_for(
            asyncio.gather(*(reflector.list() for reflector in reflectors)), WAIT)
        assert versions == ["7", "7", "7"]
        for consumer in consumers:
            assert consumer.rows == ["o%d-%d" % (at, k) for at in range(6) for k in range(5)]
        return counts["most"]

    assert asyncio.run(scenario()) == 2


class Hung(Paging):
    """A cluster that answers its first LIST page, then never answers again."""

    async def call(self, method, path, params):
        if params.get("continue"):
            await asyncio.Event().wait()
        return await super().call(method, path, params)


def test_a_cluster_that_stops_answering_holds_no_background_slot(monkeypatch):
    """The bound is every cluster's (kubeapi/background.py), so a cluster whose API server
    hangs mid-LIST must hold none of it: its fetch waits outside the bound, and another
    cluster's LIST goes on, even with a single slot."""
    monkeypatch.setattr(watch, "BACKGROUND", watch.BACKGROUND.__class__(1))

    async def scenario():
        counts = {"now": 0, "most": 0}
        hung = watch.Reflector(Hung(counts, pages=6, size=5), Resource(), lambda o: o,
                               Listing(), decode=lambda raw: json.loads(bytes(raw)))
        stuck = asyncio.ensure_future(hung.list())
        await asyncio.sleep(0.05)   # its first page made into rows; its second never comes
        healthy = Listing()
        other = watch.Reflector(Paging(counts, pages=6, size=5), Resource(),
                                lambda obj: obj["metadata"]["name"], healthy,
                                decode=lambda raw: json.loads(bytes(raw)))
        assert await asyncio.wait_for(other.list(), WAIT) == "7"
        assert len(healthy.rows) == 30 and not stuck.done()
        stuck.cancel()
        await asyncio.gather(stuck, return_exceptions=True)

    asyncio.run(scenario())
