"""Bounded polling for tests: every wait has a deadline and says what it waited for."""

import time

# The first poll again after FIRST seconds, each pause then GROWTH times the last, up to the
# caller's interval: most conditions hold within a few tenths of a second (a namespace
# accepting pods, a pod started, a cache caught up), and a fixed 0.2 s pause made each of the
# suite's hundreds of waits 0.1 s longer on average than its condition; a long wait still polls
# at the interval after its first half second (about four more polls than before).
FIRST = 0.02
GROWTH = 1.5


def wait_for(predicate, timeout=30, interval=0.2, what="a condition"):
    """Poll until `predicate()` is truthy and return its value; TimeoutError otherwise.
    ``interval``: the longest pause between two polls (the first ones are shorter)."""
    deadline = time.monotonic() + timeout
    pause = min(FIRST, interval)
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(pause)
        pause = min(pause * GROWTH, interval)
