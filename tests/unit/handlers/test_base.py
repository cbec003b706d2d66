"""Large list responses are encoded in the executor, to the same bytes (issue #19, item 4)."""

import asyncio
import threading

from dashboard_api.handlers import base


class _Executor:
    def __init__(self):
        self.threads = []

    async def run(self, fn, *args):
        def call():
            self.threads.append(threading.get_ident())
            return fn(*args)
        return await asyncio.to_thread(call)


class _Handler:
    """What write_list uses of a handler."""

    def __init__(self):
        self.executor = _Executor()
        self.cluster = type("ClusterContext", (), {"api": type("Cluster", (), {
            "executor": self.executor})()})()
        self.sent = []

    def _json_headers(self, status):
        self.sent.append(("headers", status))

    def write_json(self, obj, status=200):
        self.sent.append(("headers", status))
        self.finish(base.encode_json(obj))

    def finish(self, body):
        self.sent.append(("body", body, threading.get_ident()))


def _list(n):
    items = [{"objectMeta": {"name": "p%d/é" % i}, "status": "Running"} for i in range(n)]
    return {"listMeta": {"totalItems": n}, "pods": items, "items": items, "errors": []}


def test_a_large_list_is_encoded_off_the_loop_to_the_same_bytes():
    async def scenario():
        loop_thread = threading.get_ident()
        small, large = _Handler(), _Handler()
        await base.BaseHandler.write_list(small, _list(base.LARGE_LIST_ITEMS - 1))
        await base.BaseHandler.write_list(large, _list(base.LARGE_LIST_ITEMS))
        assert small.executor.threads == []
        assert len(large.executor.threads) == 1 and large.executor.threads[0] != loop_thread
        assert large.sent[0] == ("headers", 200)
        assert large.sent[1][1] == base.encode_json(_list(base.LARGE_LIST_ITEMS))
        assert large.sent[1][2] == loop_thread   # the answer is written on the event loop
        assert '"p0/é"' in large.sent[1][1]      # not escaped, as write_json writes it
        await base.BaseHandler.write_list(small, ["not", "a", "list", "envelope"])
        assert small.sent[-1][1] == '["not","a","list","envelope"]'
    asyncio.run(scenario())
