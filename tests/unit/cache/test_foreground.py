"""Background index builds step aside while a request's executor work runs (cache/foreground.py),
and no longer than STEP_ASIDE at a time."""

import asyncio
import concurrent.futures
import threading
import time

from dashboard_api.cache import foreground as foreground_module, sorted as sorted_module
from dashboard_api.cache.foreground import Foreground
from dashboard_api.cache.sorted import SortedIndex
from dashboard_api.query.properties import COMMON, keys_of
from dashboard_api.query.rows import Row


class Clock:
    def __init__(self):
        self.now = 0.0
        self.naps = 0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.naps += 1
        self.now += seconds


def test_a_build_goes_on_at_once_when_no_request_is_served():
    clock = Clock()
    fg = Foreground(clock, clock.sleep)
    fg.step_aside()
    assert clock.naps == 0 and clock.now == 0


def test_a_build_waits_while_a_request_is_served_but_never_longer_than_the_bound():
    clock = Clock()
    fg = Foreground(clock, clock.sleep)
    with fg.serving():
        fg.step_aside()
    assert foreground_module.STEP_ASIDE <= clock.now < foreground_module.STEP_ASIDE + 0.01
    assert fg.requests == 0


def test_a_build_goes_on_as_soon_as_the_request_is_done():
    clock = Clock()
    fg = Foreground(clock, clock.sleep)
    served = fg.serving()
    served.__enter__()

    def sleep(seconds):
        clock.sleep(seconds)
        if clock.naps == 3:
            served.__exit__(None, None, None)
    fg.sleep = sleep
    fg.step_aside()
    assert clock.naps == 3 and fg.requests == 0


def test_a_build_steps_aside_a_moment_after_a_request_arrives_but_a_relist_does_not():
    clock = Clock()
    fg = Foreground(clock, clock.sleep)
    fg.arrived()
    fg.step_aside_for_work()
    assert clock.now == 0   # a re-list's build waits for executor work only
    fg.step_aside()
    assert foreground_module.ARRIVAL <= clock.now < foreground_module.ARRIVAL + 0.01
    began = clock.now
    fg.step_aside()         # long after the arrival: no wait
    assert clock.now == began


def _rows(count):
    rows = []
    for i in range(count):
        item = {"objectMeta": {"name": "p-%05d" % ((i * 7919) % count),
                               "namespace": "ns-%d" % (i % 3),
                               "creationTimestamp": "2026-11-28T10:00:%02dZ" % (i % 60)}}
        rows.append(Row(None, item["objectMeta"]["namespace"], item["objectMeta"]["name"],
                        keys_of(item, COMMON)))
    return rows


def test_an_index_built_beside_a_request_steps_aside_between_its_slices_and_is_whole():
    saved, sorted_module.SORT_SLICE = sorted_module.SORT_SLICE, 64
    naps = []

    def sleep(seconds):
        naps.append(seconds)
        time.sleep(seconds)
    fg = Foreground(sleep=sleep)
    rows = _rows(1000)
    spec = (("creationTimestamp", False),)
    pool = concurrent.futures.ThreadPoolExecutor(2)
    released = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()

        def request():   # a request's work in the executor, done when the test says
            released.wait(5)
            return "answered"

        with fg.serving():
            build = loop.run_in_executor(pool, lambda: SortedIndex(spec, rows, COMMON,
                                                                   fg.step_aside))
            await asyncio.sleep(0.1)
            assert not build.done()   # it waits: a request is served
            released.set()
            assert await loop.run_in_executor(pool, request) == "answered"
        return await asyncio.wait_for(build, 10)

    try:
        index = asyncio.run(main())
    finally:
        sorted_module.SORT_SLICE = saved
        pool.shutdown()
    assert sum(naps) > 0.05   # it stepped aside while the request was served
    expected = SortedIndex(spec, rows, COMMON)
    assert index.rows() == expected.rows() and len(index) == 1000
