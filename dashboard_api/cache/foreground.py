"""Requests first: the background index builds step aside while a request's work runs in the
executor (issue #41: a sort asked for the first time delays no request).

A large store's index is built in the executor (cache/orders.py), in steps that each hold the
interpreter's lock a few milliseconds (cache/sorted.py ``sliced_sort``). A page read before its
index is there is a selection in the executor too (cache/view.py ``partial_page``): both want
the lock, and a request that shared it with one build or more took four to eight times as long
as alone (a second page of events by reason, asked while that sort's index built: 800 ms
against 216 for the first). So a request's executor work is counted while it runs
(``serving``, on the event loop) and a build waits, between two of its steps, while any is
(``step_aside``, in a worker): never longer than STEP_ASIDE at a time, so that requests that
never stop cannot stop a build either, they only slow it.

The event loop's own work wants the lock too, back after each of its system calls: a page of a
small store asked while the events' indexes built took 200-340 ms where it takes a few. So a
build that steps aside also waits until ARRIVAL seconds have passed since the last request
arrived (``arrived``, told by the HTTP server): a short request is done by then, and a long one
(a log followed for an hour) holds no build for more than its first ARRIVAL. A re-list's
indexes (cache/relists.py) step aside only for executor work (``step_aside_for_work``): the
store is stale until they are built, and under a steady load they would wait at every step.

One count for the process: the builds of every store and cluster share one interpreter lock
with every request.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Awaitable, Callable, Iterator

STEP_ASIDE = 0.05   # seconds a build waits at most between two of its steps
NAP = 0.002         # how often a waiting build looks again
ARRIVAL = 0.05      # seconds after a request arrives during which builds step aside for it


class Foreground:
    """How many requests' executor works are under way (changed on the event loop only; read
    by the workers, an int read whole under the lock)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Any] = time.sleep):
        self.requests = 0
        self.clock = clock
        self.sleep = sleep
        self.last_arrival = float("-inf")   # when the last request arrived

    def arrived(self) -> None:
        """A request arrived (told by the HTTP server, on the event loop)."""
        self.last_arrival = self.clock()

    @contextlib.contextmanager
    def serving(self) -> Iterator[None]:
        """Counts a request's work while the block runs (on the event loop)."""
        self.requests += 1
        try:
            yield
        finally:
            self.requests -= 1

    async def run(self, run: Callable[..., Awaitable[Any]], fn: Callable[..., Any],
                  *args: Any) -> Any:
        """``run(fn, *args)`` (the executor), counted as a request's work."""
        with self.serving():
            return await run(fn, *args)

    def step_aside(self) -> None:
        """Called by a build between two steps (in a worker): returns once no request's work is
        under way and no request arrived within ARRIVAL, or after STEP_ASIDE."""
        self._wait(arrivals=True)

    def step_aside_for_work(self) -> None:
        """As ``step_aside``, for requests' executor work only (a re-list's indexes)."""
        self._wait(arrivals=False)

    def _busy(self, now, arrivals):
        return self.requests or (arrivals and now - self.last_arrival < ARRIVAL)

    def _wait(self, arrivals):
        began = now = self.clock()
        while self._busy(now, arrivals) and now - began < STEP_ASIDE:
            self.sleep(NAP)
            now = self.clock()


FOREGROUND = Foreground()
