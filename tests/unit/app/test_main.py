"""Start-up (app/main.py): the interpreter's lock is handed over every SWITCH_INTERVAL once the
gateway is ready, Python's default until then (issue #41)."""

import asyncio
import sys

from dashboard_api.app import main
from dashboard_api.serving import lifecycle as lifecycle_mod


class Lifecycle:
    def __init__(self, ready_after):
        self.asked, self.ready_after, self.stopping, self.on_ready = 0, ready_after, False, None

    def ready(self):
        self.asked += 1
        return self.asked > self.ready_after, "the watch cache is syncing"


def test_the_switch_interval_is_set_once_ready_and_not_before(monkeypatch):
    monkeypatch.setattr(main, "READY_POLL", 0.001)
    default = sys.getswitchinterval()
    seen = []

    async def scenario():
        lifecycle = Lifecycle(ready_after=3)
        task = asyncio.ensure_future(main.responsive_once_ready(lifecycle))
        while not task.done():
            seen.append(sys.getswitchinterval())
            await asyncio.sleep(0)
        return lifecycle.asked

    try:
        assert asyncio.run(scenario()) == 4
        assert sys.getswitchinterval() == main.SWITCH_INTERVAL
        assert seen and set(seen) == {default}   # unchanged while not ready
    finally:
        sys.setswitchinterval(default)


def test_a_gateway_stopping_before_ready_keeps_the_default():
    default = sys.getswitchinterval()
    lifecycle = Lifecycle(ready_after=10 ** 9)
    lifecycle.stopping = True
    asyncio.run(main.responsive_once_ready(lifecycle))
    assert sys.getswitchinterval() == default


def test_the_check_that_finds_the_gateway_ready_sets_it_at_once():
    """A /readyz probe's check, between two of the loop's looks: the interval is set then."""
    class Cache:
        ready = False

        def settled(self):
            return self.ready

    default, cache = sys.getswitchinterval(), Cache()
    lifecycle = lifecycle_mod.Lifecycle(cache)
    lifecycle.cache_started = True
    lifecycle.on_ready = main.responsive
    try:
        assert lifecycle.ready()[0] is False and sys.getswitchinterval() == default
        cache.ready = True
        assert lifecycle.ready()[0] is True
        assert sys.getswitchinterval() == main.SWITCH_INTERVAL
    finally:
        sys.setswitchinterval(default)
