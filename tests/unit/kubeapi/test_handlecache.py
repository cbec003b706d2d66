"""--cache-enabled: one client per token and impersonation, bounded, expiring."""

from dashboard_api.kubeapi.handlecache import LruTtlCache


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_one_client_per_key_until_it_expires():
    clock = Clock()
    cache = LruTtlCache(10, ttl=60, clock=clock)
    made = []

    def factory():
        made.append(object())
        return made[-1]

    first = cache.get_or_create("a", factory)
    assert cache.get_or_create("a", factory) is first
    clock.now += 59.9
    assert cache.get_or_create("a", factory) is first
    clock.now += 0.1
    assert cache.get_or_create("a", factory) is not first
    assert len(made) == 2


def test_count_is_bounded_least_recently_used_first():
    cache = LruTtlCache(2, ttl=60, clock=Clock())
    a = cache.get_or_create("a", object)
    cache.get_or_create("b", object)
    cache.get_or_create("a", object)        # a is now the most recent
    cache.get_or_create("c", object)        # evicts b
    assert len(cache) == 2
    assert cache.get_or_create("a", object) is a
    made = []
    cache.get_or_create("b", lambda: made.append(1) or object())
    assert made == [1]
