"""The sliding-window quantile structure, driven by an injected clock."""

import math

import pytest

from dashboard_api.serving.slidingquantiles import SlidingQuantiles


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def close(a, b, rel=0.011):
    return abs(a - b) <= rel * b


def test_empty_window_gives_nan():
    q = SlidingQuantiles(clock=Clock())
    assert all(math.isnan(v) for v in q.quantiles((0.5, 0.9)).values())
    assert q.count() == 0


def test_quantiles_within_the_relative_error():
    q = SlidingQuantiles(clock=Clock())
    for v in range(1, 1001):
        q.observe(v * 1000.0)
    got = q.quantiles((0.5, 0.9, 0.99, 1.0))
    assert close(got[0.5], 500_000) and close(got[0.9], 900_000)
    assert close(got[0.99], 990_000) and close(got[1.0], 1_000_000)


def test_zero_and_negative_values_count_as_zero():
    q = SlidingQuantiles(clock=Clock())
    for v in (0, -5, 0, 100):
        q.observe(v)
    got = q.quantiles((0.5, 1.0))
    assert got[0.5] == 0.0 and close(got[1.0], 100)


def test_observations_leave_exactly_after_the_window():
    clock = Clock()
    q = SlidingQuantiles(window=3600, clock=clock)
    for _ in range(10):
        q.observe(1_000_000)          # t = 1000
    clock.now += 1800
    for _ in range(10):
        q.observe(10)                 # t = 2800
    assert q.count() == 20
    clock.now = 1000 + 3599           # the first slice is still inside the window
    assert q.count() == 20 and close(q.quantiles((1.0,))[1.0], 1_000_000)
    clock.now = 1000 + 3600           # ... and now it has slid out
    assert q.count() == 10
    assert close(q.quantiles((1.0,))[1.0], 10)
    clock.now = 2800 + 3600
    assert q.count() == 0


def test_window_slides_one_second_at_a_time():
    clock = Clock()
    q = SlidingQuantiles(window=60, clock=clock)
    for second in range(120):
        q.observe(second + 1)
        # Everything observed in the last 60 seconds, this second included.
        assert q.count() == min(second + 1, 60)
        clock.now += 1
    clock.now -= 1
    # The window now holds the values 61..120.
    assert close(q.quantiles((0.5,))[0.5], 90)


def test_memory_is_bounded_by_slices_and_bins():
    clock = Clock()
    q = SlidingQuantiles(window=10, clock=clock)
    for i in range(10_000):
        q.observe(5.0)
        clock.now += 0.01
    assert len(q._slices) <= 11 and len(q._totals) == 1


@pytest.mark.parametrize("kw", [dict(window=0), dict(resolution=0), dict(relative_error=1)])
def test_bad_parameters(kw):
    with pytest.raises(ValueError):
        SlidingQuantiles(**kw)
