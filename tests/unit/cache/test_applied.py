"""Read your own writes (dashboard_api/cache/applied.py): the waiter registry, resolved by the
store's apply path, timed out, cleaned up."""

import asyncio
import gc
import json
import time
import weakref

import ujson

from dashboard_api.cache.applied import Applied, own_writes, settle, target
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import SYNCED
from dashboard_api.cache.watchcache import Cached
from dashboard_api.kinds import table as kinds
from dashboard_api.kubeapi.client import Response

DEPLOYMENTS = "/apis/apps/v1/namespaces/ns/deployments"


class Resource:
    group, plural, version, namespaced = "apps", "deployments", "v1", True


class FakeCache:
    """What settle() reads of a WatchCache: one synced store of deployments."""

    def __init__(self):
        self.applied = Applied()
        self.cached = Cached(kinds.get("deployment"), Resource(), self.applied)
        self.cached.store.state = SYNCED

    def synced_store(self, group, plural):
        if (group, plural) != ("apps", "deployments") or self.cached.store.state != SYNCED:
            return None
        return self.cached.store

    def event(self, kind, obj):
        """The reflector's call for one watch event."""
        row = self.cached.to_row(self.cached.kind.decode(json.dumps(obj).encode()))
        self.cached.apply(kind, row, obj["metadata"]["resourceVersion"])


def deployment(name="web", uid="u-1", version="10", **meta):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": dict(name=name, namespace="ns", uid=uid, resourceVersion=version, **meta),
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}}}


def reply(obj, status=200):
    return Response(status, {}, ujson.dumps(obj).encode())


def run(coro):
    return asyncio.run(coro)


def test_paths_name_their_resource():
    assert target("/api/v1/namespaces") == ("", "namespaces", "", "", "")
    assert target("/api/v1/namespaces/ns") == ("", "namespaces", "", "ns", "")
    assert target("/api/v1/namespaces/ns/services") == ("", "services", "ns", "", "")
    assert target(DEPLOYMENTS + "/web/scale") == ("apps", "deployments", "ns", "web", "scale")
    assert target("/api/v1/nodes/n%3A1") == ("", "nodes", "", "n:1", "")
    assert target("/version") is None and target("/apis/apps") is None


def test_a_write_answers_when_its_event_is_applied():
    async def scenario():
        cache = FakeCache()
        writing = asyncio.ensure_future(settle(cache, "POST", DEPLOYMENTS,
                                               reply(deployment()), 5))
        await asyncio.sleep(0)
        assert len(cache.applied) == 1 and not writing.done()
        cache.event("ADDED", deployment())
        assert await writing is True
        assert len(cache.applied) == 0 and cache.applied.settled == 1
    run(scenario())


def test_versions_are_matched_by_equality_only():
    async def scenario():
        cache = FakeCache()
        cache.event("ADDED", deployment(version="9"))
        started = time.monotonic()
        writing = asyncio.ensure_future(settle(cache, "PUT", DEPLOYMENTS + "/web",
                                               reply(deployment(version="10")), 0.2))
        await asyncio.sleep(0)
        # Another object, then a version that sorts after ours as text and as a number: no.
        cache.event("ADDED", deployment(name="other", uid="u-2", version="10"))
        cache.event("MODIFIED", deployment(version="11"))
        cache.event("MODIFIED", deployment(version="9a"))
        assert await writing is False
        assert 0.2 <= time.monotonic() - started < 1.5
        assert len(cache.applied) == 0 and cache.applied.lagged == 1
    run(scenario())


def test_what_the_store_already_holds_needs_no_wait():
    async def scenario():
        cache = FakeCache()
        cache.event("ADDED", deployment(version="10"))
        assert await settle(cache, "PUT", DEPLOYMENTS + "/web", reply(deployment()), 5)
        assert len(cache.applied) == 0
        # A Scale carries its parent's uid and version.
        scale = {"kind": "Scale", "apiVersion": "autoscaling/v1",
                 "metadata": {"name": "web", "namespace": "ns", "uid": "u-1",
                              "resourceVersion": "12"}, "spec": {"replicas": 3}}
        writing = asyncio.ensure_future(settle(cache, "PATCH", DEPLOYMENTS + "/web/scale",
                                               reply(scale), 5))
        await asyncio.sleep(0)
        cache.event("MODIFIED", deployment(version="12"))
        assert await writing is True
    run(scenario())


def test_a_delete_waits_for_the_deleted_event():
    async def scenario():
        cache = FakeCache()
        cache.event("ADDED", deployment(version="10"))
        # The reply of an immediate delete: the object's last state, already in the store.
        writing = asyncio.ensure_future(settle(cache, "DELETE", DEPLOYMENTS + "/web",
                                               reply(deployment(version="10")), 5))
        await asyncio.sleep(0)
        assert not writing.done()
        cache.event("MODIFIED", deployment(version="10"))
        await asyncio.sleep(0)
        assert not writing.done()
        cache.event("DELETED", deployment(version="13"))
        assert await writing is True
        # A Status reply names the uid in its details; an object already gone is settled.
        status = {"kind": "Status", "status": "Success",
                  "details": {"name": "web", "kind": "deployments", "uid": "u-1"}}
        assert await settle(cache, "DELETE", DEPLOYMENTS + "/web", reply(status), 5)
        assert len(cache.applied) == 0
    run(scenario())


def test_a_pending_delete_settles_with_its_terminating_state():
    async def scenario():
        cache = FakeCache()
        cache.event("ADDED", deployment(version="10"))
        pending = deployment(version="14", deletionTimestamp="2026-01-01T00:00:00Z",
                             finalizers=["foregroundDeletion"])
        writing = asyncio.ensure_future(settle(cache, "DELETE", DEPLOYMENTS + "/web",
                                               reply(pending), 5))
        await asyncio.sleep(0)
        cache.event("MODIFIED", pending)
        assert await writing is True
    run(scenario())


def test_a_relist_settles_what_it_holds():
    async def scenario():
        cache = FakeCache()
        writing = asyncio.ensure_future(settle(cache, "POST", DEPLOYMENTS,
                                               reply(deployment(version="20")), 5))
        await asyncio.sleep(0)
        async def inline(fn, *args):   # the executor's run, in the test's thread
            return fn(*args)

        await cache.cached.relist([row_of(None, deployment(version="20"))], "25", inline)
        assert await writing is True
    run(scenario())


def test_uncached_kinds_and_replies_without_an_object_do_not_wait():
    async def scenario():
        cache = FakeCache()
        started = time.monotonic()
        secret = {"kind": "Secret", "metadata": {"name": "s", "uid": "u-9",
                                                 "resourceVersion": "1"}}
        assert await settle(cache, "POST", "/api/v1/namespaces/ns/secrets", reply(secret), 5)
        eviction = {"kind": "Status", "status": "Success"}
        assert await settle(cache, "POST", "/api/v1/namespaces/ns/pods/p/eviction",
                            reply(eviction), 5)
        cache.cached.store.state = "syncing"
        assert await settle(cache, "POST", DEPLOYMENTS, reply(deployment()), 5)
        assert time.monotonic() - started < 0.5 and len(cache.applied) == 0
    run(scenario())


def test_waiters_are_bounded_and_removed_on_timeout():
    async def scenario():
        cache = FakeCache()
        cache.applied.limit = 3
        writes = [asyncio.ensure_future(settle(cache, "POST", DEPLOYMENTS,
                                               reply(deployment("d%d" % i, "u%d" % i)), 0.1))
                  for i in range(5)]
        await asyncio.sleep(0)
        assert len(cache.applied) == 3
        assert await asyncio.gather(*writes) == [False] * 5
        assert len(cache.applied) == 0 and not cache.applied._waiting
        # Two writes of one object, one resolved: the other keeps waiting, then leaves too.
        first = asyncio.ensure_future(settle(cache, "PUT", DEPLOYMENTS + "/web",
                                             reply(deployment(version="1")), 0.1))
        second = asyncio.ensure_future(settle(cache, "PUT", DEPLOYMENTS + "/web",
                                              reply(deployment(version="2")), 0.1))
        await asyncio.sleep(0)
        cache.event("MODIFIED", deployment(version="1"))
        assert await first is True and await second is False
        assert len(cache.applied) == 0 and not cache.applied._waiting
    run(scenario())


class FakeHandler:
    def __init__(self):
        self.lag_warnings = []
        self.headers = []

    def add_header(self, name, value):
        self.headers.append((name, value))


class FakeHandle:
    def __init__(self):
        self.cluster = type("Cluster", (), {"writes": 0})()


def test_own_writes_wait_warn_and_count_object_writes_only():
    async def scenario():
        cache, handler, shared = FakeCache(), FakeHandler(), FakeHandle()
        own = own_writes(shared, cache, handler, 0.05)
        assert own is not shared and own.after_write and shared.cluster is own.cluster
        assert getattr(shared, "after_write", None) is None  # a --cache-enabled handle
        review = {"kind": "SelfSubjectAccessReview", "status": {"allowed": True}}
        await own.after_write("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                              reply(review, 201))
        await own.after_write("GET", DEPLOYMENTS + "/web", reply(deployment()))
        await own.after_write("PUT", DEPLOYMENTS + "/web", reply({"kind": "Status"}, 409))
        assert shared.cluster.writes == 0 and not handler.headers
        await own.after_write("POST", DEPLOYMENTS, reply(deployment(), 201))  # never applied
        assert shared.cluster.writes == 1
        [(name, value)] = handler.headers
        assert name == "Warning" and value.startswith('299 - "written, but lists of '
                                                      'deployments from this gateway')
        assert handler.lag_warnings == [value]
        # The pass-through path: no wait, no warning, still counted.
        plain = own_writes(shared, None, handler, 5)
        await plain.after_write("DELETE", DEPLOYMENTS + "/web", reply(deployment()))
        assert shared.cluster.writes == 2 and len(handler.headers) == 1
    run(scenario())


def test_an_event_applied_and_superseded_before_the_reply_is_not_awaited():
    async def scenario():
        cache = FakeCache()
        cache.event("ADDED", deployment(version="258"))
        cache.event("MODIFIED", deployment(version="261"))  # the controller, before our reply
        started = time.monotonic()
        assert await settle(cache, "POST", DEPLOYMENTS, reply(deployment(version="258")), 5)
        cache.event("DELETED", deployment(version="262"))
        assert await settle(cache, "PUT", DEPLOYMENTS + "/web", reply(deployment(version="261")), 5)
        assert time.monotonic() - started < 1 and len(cache.applied) == 0
    run(scenario())


def test_remembered_events_are_bounded_in_count_and_age():
    now = [0.0]
    applied = Applied(size=3, horizon=10, clock=lambda: now[0])
    rows = [row_of(None, deployment(uid="u%d" % i)) for i in range(5)]
    for row in rows:
        applied.notify("ADDED", row)
    assert list(applied._recent) == [("u2", "10"), ("u3", "10"), ("u4", "10")]
    now[0] = 10.5
    applied.notify("DELETED", rows[0])
    assert list(applied._recent) == [("u0", None)]


def test_own_writes_make_no_cycle_with_the_handler_keeping_them():
    # The handler keeps its reads' handle; a strong reference back from the handle made a
    # cycle that only the collector freed, with the whole request (issue #30).
    handler, shared = FakeHandler(), FakeHandle()
    handler.kept = own_writes(shared, FakeCache(), handler, 5)
    gone = weakref.ref(handler)
    gc.disable()
    try:
        del handler
        assert gone() is None     # freed by its reference count, no collection needed
    finally:
        gc.enable()
