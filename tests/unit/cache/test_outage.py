"""Whether the API server has stopped answering the watch cache, and since when
(cache/outage.py)."""

import types

from dashboard_api.cache.outage import unanswered_since


def store(stale_since, serving=True):
    return types.SimpleNamespace(stale_since=stale_since, serving=lambda: serving)


def test_every_answering_store_stale_for_the_grace_is_an_outage_since_the_newest():
    clock, wall = (lambda: 100.0), (lambda: 1_000_100.0)
    stores = [store(90.0), store(95.0), store(None, serving=False)]
    assert unanswered_since(stores, clock, wall, grace=2.0) == 1_000_095.0


def test_one_current_store_or_a_fresh_blink_is_no_outage():
    clock, wall = (lambda: 100.0), (lambda: 1_000_100.0)
    assert unanswered_since([store(90.0), store(None)], clock, wall) is None
    assert unanswered_since([store(90.0), store(99.5)], clock, wall, grace=2.0) is None
    assert unanswered_since([store(None, serving=False)], clock, wall) is None
    assert unanswered_since([], clock, wall) is None
