"""Issue #19's pure parts: a store that synced once goes on serving (stale) while it re-lists,
how stale it is, the first-sync wait, the jittered backoff and the bounded access answers."""

import asyncio

from dashboard_api.cache.store import SYNCED, SYNCING, UNAVAILABLE, Store
from dashboard_api.kubeapi import watch
from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists.access import Access


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_synced_store_serves_while_it_relists_and_says_how_stale():
    clock = Clock()
    store = Store(None, clock=clock)
    assert not store.serving()                    # never synced: nothing to answer from
    store.set_state(SYNCED)
    assert store.serving() and store.staleness() == 0
    clock.now += 5
    store.set_state(SYNCING)                      # a 410: the re-list starts
    clock.now += 7
    assert store.serving() and store.staleness() == 7
    store.set_state(SYNCING)                      # still the same re-list: since its start
    assert store.staleness() == 7
    store.set_state(SYNCED)
    assert store.staleness() == 0
    store.set_state(UNAVAILABLE)                  # the service lost its rights: pass through
    assert not store.serving()


def test_the_first_sync_wait_returns_at_the_sync_or_after_the_bound():
    async def scenario():
        waiting = Store(None)
        task = asyncio.ensure_future(waiting.wait_first_sync(5))
        await asyncio.sleep(0.01)
        assert not task.done()
        waiting.set_state(SYNCED)
        assert await task is True
        late = Store(None)
        assert await late.wait_first_sync(0.01) is False
        refused = Store(None)
        task = asyncio.ensure_future(refused.wait_first_sync(5))
        await asyncio.sleep(0.01)
        refused.set_state(UNAVAILABLE)
        assert await task is False

    asyncio.run(scenario())


def test_backoff_is_jittered_around_its_step():
    values = {round(watch.jittered(10.0), 3) for _ in range(50)}
    assert len(values) > 10 and all(5.0 <= v <= 15.0 for v in values)


def test_access_answers_are_bounded_and_expire():
    class Handle:
        impersonation = ()
        reviews = 0

        def __init__(self, token):
            self.token = token

        async def can_i(self, **attributes):
            Handle.reviews += 1
            return True

    clock = Clock()
    access = Access(ttl=5, clock=clock, size=3)
    pods = Resource("", "v1", "pods", "Pod", True, ())

    async def ask(n):
        return await access.allowed(Handle("token-%d" % n), "list", pods, "default")

    for n in range(10):
        assert asyncio.run(ask(n)) is True
    assert len(access._answers) == 3 and Handle.reviews == 10
    assert asyncio.run(ask(9)) is True and Handle.reviews == 10   # remembered
    clock.now += 6
    assert asyncio.run(ask(9)) is True and Handle.reviews == 11   # expired: asked again
