"""The cache's CPU-bound background jobs, a few at a time for the whole process
(kubeapi/background.py): never more under way than the bound, whichever executors they run
in, started in the order they asked, and a slot is never lost to a job cancelled or failed,
nor to a loop that ended with its jobs."""

import asyncio
import threading
import time

import pytest

from dashboard_api.kubeapi.background import Background
from dashboard_api.kubeapi.executor import Executor

WAIT = 5.0


class Counting:
    """Functions for the executor that note how many of them run at once, and in what order
    they began."""

    def __init__(self):
        self.lock = threading.Lock()
        self.now = self.most = 0
        self.began = []

    def job(self, name, seconds=0.02):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.began.append(name)
        time.sleep(seconds)
        with self.lock:
            self.now -= 1
        return name


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_never_more_jobs_at_once_than_the_bound_across_executors(jobs):
    counting, background = Counting(), Background(jobs)
    pools = [Executor(8), Executor(8)]   # two clusters' executors, one bound

    async def scenario():
        return await asyncio.wait_for(asyncio.gather(*(
            background.run(pools[k % 2].run, counting.job, k) for k in range(16))), WAIT)

    try:
        assert asyncio.run(scenario()) == list(range(16))
    finally:
        for pool in pools:
            pool.shutdown()
    assert counting.most == jobs


def test_jobs_start_in_the_order_they_asked():
    counting, background, pool = Counting(), Background(1), Executor(8)

    async def scenario():
        await asyncio.wait_for(asyncio.gather(*(
            background.run(pool.run, counting.job, k, 0.005) for k in range(10))), WAIT)

    try:
        asyncio.run(scenario())
    finally:
        pool.shutdown()
    assert counting.began == list(range(10))


def test_a_failed_or_cancelled_job_gives_its_slot_back():
    background, pool = Background(1), Executor(4)
    release = threading.Event()

    def fails():
        raise ValueError("bad page")

    async def scenario():
        with pytest.raises(ValueError):
            await background.run(pool.run, fails)
        running = asyncio.ensure_future(background.run(pool.run, release.wait, WAIT))
        waiting = asyncio.ensure_future(background.run(pool.run, time.sleep, 0))
        await asyncio.sleep(0.05)
        waiting.cancel()    # cancelled while it waits for a slot
        running.cancel()    # cancelled while it runs: its thread finishes alone
        await asyncio.gather(running, waiting, return_exceptions=True)
        # both slots' worth is back: the next job starts at once, before the cancelled one's
        # thread is released
        assert await asyncio.wait_for(background.run(pool.run, lambda: "next"), 1.0) == "next"
        release.set()

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        pool.shutdown()


def test_a_loop_that_ended_with_its_slots_taken_leaves_the_next_loop_free():
    background, pool = Background(1), Executor(4)
    release = threading.Event()

    async def abandoned():
        asyncio.ensure_future(background.run(pool.run, release.wait, WAIT))
        await asyncio.sleep(0.05)   # the job holds the only slot as the loop ends

    async def next_loop():
        return await asyncio.wait_for(background.run(pool.run, lambda: "ran"), 1.0)

    try:
        asyncio.run(abandoned())
        assert asyncio.run(next_loop()) == "ran"
    finally:
        release.set()
        pool.shutdown()
