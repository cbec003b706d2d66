import pytest

from dashboard_api.kubeapi.ratelimit import Buckets, TokenBucket
from dashboard_api.serving.errors import ApiError


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_burst_then_spaced_by_qps():
    clock = Clock()
    bucket = TokenBucket(qps=2, burst=3, clock=clock)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.reserve() == pytest.approx(0.5)
    assert bucket.reserve() == pytest.approx(1.0)
    clock.now += 1.0
    assert bucket.reserve() == pytest.approx(0.5)


def test_a_wait_beyond_the_cap_is_refused_and_takes_nothing():
    clock = Clock()
    bucket = TokenBucket(qps=1, burst=1, max_wait=2.0, clock=clock)
    assert bucket.reserve() == 0.0
    assert bucket.reserve() == pytest.approx(1.0)
    assert bucket.reserve() == pytest.approx(2.0)
    assert bucket.reserve() is None
    clock.now += 1.0
    assert bucket.reserve() == pytest.approx(2.0)


@pytest.mark.gen_test
async def test_refusal_is_a_429():
    bucket = TokenBucket(qps=1, burst=1, max_wait=0.0, clock=Clock())
    bucket.reserve()
    with pytest.raises(ApiError) as caught:
        await bucket.acquire()
    assert caught.value.code == 429 and caught.value.reason == "TooManyRequests"


def test_zero_qps_never_waits():
    bucket = TokenBucket(qps=0, burst=1, clock=Clock())
    assert all(bucket.reserve() == 0.0 for _ in range(1000))


def test_each_caller_has_its_own_bucket():
    clock = Clock()
    buckets = Buckets(qps=1, burst=1, clock=clock)
    flooded = buckets.for_caller("token-a")
    for _ in range(5):
        flooded.reserve()
    assert buckets.for_caller("token-a") is flooded
    assert buckets.for_caller("token-b").reserve() == 0.0


def test_buckets_are_bounded():
    buckets = Buckets(qps=1, burst=1, size=3, clock=Clock())
    first = buckets.for_caller("t0")
    for i in range(1, 4):
        buckets.for_caller("t%d" % i)
    assert buckets.for_caller("t0") is not first
