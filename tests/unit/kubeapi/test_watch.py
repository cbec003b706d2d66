"""A reflector stopped (its cluster let go when idle, removed or changed: clusters/context.py)
closes its watch's connection at once, not when the API server ends the watch minutes later
(meanwhile the connection stays open and its events still reach a store nobody reads), and
without an error in the log.

A local Tornado server streaming an endless response stands in for the API server's watch."""

import asyncio
import gc
import logging

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
