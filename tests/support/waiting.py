"""Bounded polling for tests: every wait has a deadline and says what it waited for."""

import time


def wait_for(predicate, timeout=30, interval=0.2, what="a condition"):
    """Poll until `predicate()` is truthy and return its value; TimeoutError otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)
