"""Client-side token buckets toward the API server (QPS and burst, as client-go has them).

Each caller gets a bucket of its own, so one user, or a flood of requests with bad tokens, cannot
starve everybody else. The official Python client has no client-side limit, so the default (qps 0)
is none; ``--api-qps``/``--api-burst`` turn it on.
"""

import asyncio
import hashlib
import time

import cachetools

from dashboard_api.serving.errors import ApiError


class TokenBucket:
    """Allows ``burst`` calls at once and ``qps`` calls a second on average.

    A qps of 0 or less disables the limit. Waiters are served in arrival order because
    each one reserves its slot before sleeping; a caller that would wait more than
    ``max_wait`` seconds is refused with 429 instead of queueing without end.
    """

    def __init__(self, qps, burst, max_wait=10.0, clock=time.monotonic):
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.max_wait = max_wait
        self._clock = clock
        self._tokens = float(self.burst)
        self._stamp = clock()

    def reserve(self):
        """Takes one token and returns how many seconds the caller must wait for it, or None
        (and takes nothing) when that would be longer than ``max_wait``."""
        if self.qps <= 0:
            return 0.0
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.qps)
        self._stamp = now
        delay = 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.qps
        if delay > self.max_wait:
            return None
        self._tokens -= 1.0
        return delay

    async def acquire(self):
        delay = self.reserve()
        if delay is None:
            raise ApiError(429, "too many calls to the API server from this client; retry later",
                           "TooManyRequests")
        if delay > 0:
            await asyncio.sleep(delay)


UNLIMITED = TokenBucket(0, 1)


class Buckets:
    """One bucket per caller, keyed by a hash of the token, the least recently used dropped
    beyond ``size``."""

    def __init__(self, qps, burst, size=10000, clock=time.monotonic):
        self.qps = qps
        self.burst = burst
        self.size = size
        self._clock = clock
        self._buckets = cachetools.LRUCache(size)

    def for_caller(self, credential):
        if self.qps <= 0:
            return UNLIMITED
        key = hashlib.sha256(credential.encode("utf-8")).digest()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.qps, self.burst, clock=self._clock)
        return bucket
