"""Client-side token bucket toward the API server (QPS and burst, as client-go does)."""

import asyncio
import time


class TokenBucket:
    """Allows ``burst`` calls at once and ``qps`` calls a second on average.

    A qps of 0 or less disables the limit. Waiters are served in arrival order because
    each one reserves its slot before sleeping.
    """

    def __init__(self, qps, burst, clock=time.monotonic):
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._clock = clock
        self._tokens = float(self.burst)
        self._stamp = clock()

    def reserve(self):
        """Takes one token and returns how many seconds the caller must wait for it."""
        if self.qps <= 0:
            return 0.0
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.qps)
        self._stamp = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def acquire(self):
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
