"""Issue #19 against the real API server: a synced kind keeps answering from its last store
while its reflector re-lists, and swaps in the new state when the LIST completes; a list asked
before a kind's first sync waits for it, and gets a 503 with Retry-After after
--cache-sync-wait; /metrics and the X-Dashboard-Cache-Age header say how stale a kind is.

The re-list is forced with the reflector's test hooks (kubeapi/watch.py): SIGUSR2 re-lists every
kind when its current watch ends (watches last one second here), and each LIST page waits
DELAY seconds, so that the re-list and the first sync last long enough to be observed."""

import os
import signal
import time

from tests.cache.helpers import kind_state, series, wait_synced
from tests.resources import kube
from tests.support.gateway import Gateway

DELAY = 3.0
HOOKS = {"DASHBOARD_API_TEST_HOOKS": "1", "DASHBOARD_API_WATCH_SECONDS": "1",
         "DASHBOARD_API_LIST_PAGE_DELAY": str(DELAY)}


def _names(reply):
    assert reply.status == 200, reply
    return {p["objectMeta"]["name"] for p in reply.json()["pods"]}


def _pod_stale_seconds(gw):
    return series(gw, "dashboard_cache_stale_seconds").get('kind="pod"')


def _until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def test_relist_answers_from_the_old_store_then_swaps(cluster, namespace, admin_token):
    gw = Gateway.start(cluster, "--access-cache-ttl=60s", env=HOOKS)
    try:
        wait_synced(gw, ("pod",), timeout=60)
        path = "/api/v1/pod/%s?sortBy=a,name" % namespace
        kube.pod(cluster, namespace, "old")
        _until(lambda: "old" in _names(gw.get(path, token=admin_token)), 20, "the pod 'old'")
        current = gw.get(path, token=admin_token)
        assert current.headers["X-Dashboard-Cache-Age"] == "0.0"
        assert _pod_stale_seconds(gw) == 0
        restarts = series(gw, "dashboard_cache_watch_restarts")['kind="pod"']

        os.kill(gw.proc.pid, signal.SIGUSR2)
        _until(lambda: kind_state(gw, "pod") == "syncing", 10, "the re-list to start")
        kube.pod(cluster, namespace, "new")   # not watched while the LIST is under way
        during = gw.get(path, token=admin_token)
        stale = _pod_stale_seconds(gw)
        still_relisting = kind_state(gw, "pod") == "syncing"
        assert still_relisting, "the re-list ended too soon to observe"
        assert _names(during) == {"old"}      # 200 from the last synced store
        age = float(during.headers["X-Dashboard-Cache-Age"])
        assert age > 0 and stale > 0

        wait_synced(gw, ("pod", "event"), timeout=30)   # a pod list reads events too
        after = gw.get(path, token=admin_token)
        assert _names(after) == {"old", "new"}
        assert float(after.headers["X-Dashboard-Cache-Age"]) < age
        assert series(gw, "dashboard_cache_watch_restarts")['kind="pod"'] > restarts
    finally:
        gw.stop()


def test_a_list_before_the_first_sync_waits_for_it(cluster, namespace, admin_token):
    kube.pod(cluster, namespace, "early")
    gw = Gateway.start(cluster, "--cache-sync-wait=30s", env=HOOKS)
    try:
        assert kind_state(gw, "pod") in (None, "syncing")
        t0 = time.monotonic()
        reply = gw.get("/api/v1/pod/%s" % namespace, token=admin_token)
        assert _names(reply) == {"early"}
        assert "X-Dashboard-Cache-Age" in reply.headers   # answered by the cache, not a LIST
        assert time.monotonic() - t0 > DELAY / 3           # it waited for the sync
        assert kind_state(gw, "pod") == "synced"
        # an invalid token is still refused at once, by the API server
        assert gw.get("/api/v1/pod/%s" % namespace, token="not-a-token").status == 401
    finally:
        gw.stop()


def test_after_the_bound_a_503_with_retry_after(cluster, namespace, admin_token):
    gw = Gateway.start(cluster, "--cache-sync-wait=0.2s", env=HOOKS)
    try:
        reply = gw.get("/api/v1/pod/%s" % namespace, token=admin_token)
        assert reply.status == 503, reply
        assert reply.headers["Retry-After"] == "1"
        assert "syncing" in reply.json()["message"]
        wait_synced(gw, ("pod",), timeout=30)
        assert gw.get("/api/v1/pod/%s" % namespace, token=admin_token).status == 200
    finally:
        gw.stop()
