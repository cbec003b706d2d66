"""The rules of kubeapi/deadlines.py (issue 27) that need no API server: which calls may leave
an outcome unknown, what the caller is told, and a body that trickles past its deadline."""

import time
import tracemalloc

import pytest

from dashboard_api.cache.store import SYNCED, SYNCING, Store
from dashboard_api.kinds.table import get as kind
from dashboard_api.kubeapi import deadlines


def test_only_writes_that_change_something_can_leave_an_unknown_outcome():
    assert deadlines.changes("POST", "/api/v1/namespaces")
    assert deadlines.changes("DELETE", "/apis/apps/v1/namespaces/a/deployments/b")
    assert not deadlines.changes("GET", "/api/v1/namespaces")
    assert not deadlines.changes(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")


def test_the_messages():
    lost = deadlines.timed_out("POST", 2.0, maybe_applied=True)
    assert (lost.code, lost.reason) == (504, "Timeout")
    assert lost.message.startswith("the API server did not answer within 2s")
    assert "outcome of this POST is unknown (it may have been applied)" in lost.message
    read = deadlines.timed_out("GET", 30.0)
    assert read.message == "the API server did not answer within 30s"
    refused = deadlines.unreachable("POST", ConnectionRefusedError())
    assert (refused.code, refused.reason) == (503, "ServiceUnavailable")
    assert "unknown" not in refused.message
    assert deadlines.not_connected(5.0).code == 504


class Trickle:
    """A urllib3 response whose body comes one byte every ``interval`` seconds, forever."""

    connection = None

    def __init__(self, interval):
        self.interval = interval
        self.closed = self.released = False

    def read1(self, size):
        time.sleep(self.interval)
        return b"x"

    def close(self):
        self.closed = True

    def release_conn(self):
        self.released = True


def test_a_trickling_body_ends_at_the_deadline_and_its_connection_is_closed():
    response = Trickle(0.05)
    started = time.monotonic()
    with pytest.raises(deadlines.DeadlinePassed):
        deadlines.read_body(response, deadlines.Deadline(0.3, 0.1))
    assert time.monotonic() - started < 0.5
    assert response.closed and response.released   # closed before it goes back to the pool


def test_a_store_cut_for_silence_is_stale_since_it_last_heard():
    now = [100.0]
    store = Store(kind("deployment"), clock=lambda: now[0])
    store.set_state(SYNCED)
    assert store.staleness() == 0.0
    store.set_state(SYNCING, since=90.0)   # heard last at 90, cut at 100
    assert store.staleness() == 10.0
    now[0] = 101.0
    assert store.staleness() == 11.0
    store.set_state(SYNCED)
    assert store.staleness() == 0.0


class Body:
    """A urllib3 response whose body is ``size`` bytes, given ``read1`` at a time."""

    connection = None

    def __init__(self, size):
        self.left = size
        self.released = False

    def read1(self, size):
        size = min(size, self.left)
        self.left -= size
        return b"x" * size

    def close(self):
        pass

    def release_conn(self):
        self.released = True


def test_a_body_is_read_whole_at_the_cost_of_one_copy():
    """A LIST page (4 MB of heavy pods) costs its own size while it arrives, not its chunks
    and their join besides (a re-list's pages are its memory peak: issue #41)."""
    size = 4 << 20
    for small in (0, 1, 65536, 65537):
        assert deadlines.read_body(Body(small), deadlines.Deadline(5, 5)) == b"x" * small
    response = Body(size)
    tracemalloc.start()
    try:
        body = deadlines.read_body(response, deadlines.Deadline(5, 5))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(body) == size and response.released
    assert peak < size * 1.25   # a list of chunks and their join: twice the size
