"""The reflectors' CPU-bound work in the executor, a few jobs at a time for the whole process.

A LIST page's decoding and rows and a batch of watch events' rows are Python (or C that keeps
the interpreter's lock) from end to end: with the lock, two such jobs at once do no more work
than one. More only take the lock from the event loop, which gives it up at every system call
(each socket read and write) and waits behind every thread that wants it to get it back, and
take the workers that a request's call to the API server (a pass-through list, a review, a
write) waits for. A forced re-list of every kind starts all the kinds' LISTs at once: up to
sixteen such jobs were in one cluster's executor, and the median page during the re-list took
a quarter longer than with two (issue #41).

So they run through ``BACKGROUND``: at most JOBS of them at a time, in every cluster's
executor together (the clusters share one interpreter lock), started in the order they asked.
A job holds its slot only while it computes: the call that fetches a page is outside, so a
cluster that is slow to answer holds no slot. A request's own work never waits here, nor do the
stores' plans and index builds (cache/): those step aside for requests, sleeping between their
steps, and must not hold a slot while they sleep.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any, Awaitable, Callable

JOBS = 2   # one at a time would leave the lock idle while the loop starts the next


class Background:
    """At most ``jobs`` of the functions given to ``run`` under way at once (per event loop:
    a test's loop ends with its jobs, and never leaves the next loop a slot it cannot free)."""

    def __init__(self, jobs: int = JOBS):
        self.jobs = jobs
        self._slots: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:   # made in the running loop (on Python 3.9 a Semaphore binds then)
            slots = self._slots[loop] = asyncio.Semaphore(self.jobs)
        return slots

    async def run(self, run: Callable[..., Awaitable[Any]], fn: Callable[..., Any],
                  *args: Any) -> Any:
        """``run(fn, *args)`` (an executor's) once fewer than ``jobs`` others are under way.

        A job cancelled while it runs (a reflector stopped) gives its slot back at once; its
        thread finishes alone."""
        async with self._semaphore():
            return await run(fn, *args)


BACKGROUND = Background()
