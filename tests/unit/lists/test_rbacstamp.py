"""The stamp of the watched RBAC (lists/rbacstamp.py): it moves with any change of the five
kinds, is None while one of their stores is not current, and vouches only once settled."""

from dashboard_api.cache.store import SYNCED, SYNCING
from dashboard_api.lists.rbacstamp import AUTHORIZING, RbacStamp


class _Store:
    def __init__(self):
        self.state, self.stale_since, self.generation = SYNCED, None, 0


class _Cache:
    def __init__(self):
        self.stores = {key: _Store() for key in AUTHORIZING}

    def synced_store(self, group, plural):
        return self.stores.get((group, plural))


def test_the_stamp_moves_with_any_authorizing_kind_and_settles_after_a_while():
    now = [100.0]
    cache = _Cache()
    stamp = RbacStamp(cache, settle=2.0, clock=lambda: now[0])
    first = stamp.current()
    assert first is not None and stamp.settled() is None     # first seen now: not settled
    now[0] = 102.5
    assert stamp.settled() == first
    for key in AUTHORIZING:
        cache.stores[key].generation += 1
        moved = stamp.current()
        assert moved != first and stamp.settled() is None
        now[0] += 2.5
        assert stamp.settled() == moved
        first = moved


def test_no_stamp_while_a_store_is_not_current_or_not_cached():
    cache = _Cache()
    stamp = RbacStamp(cache)
    bindings = cache.stores[("rbac.authorization.k8s.io", "rolebindings")]
    bindings.state = SYNCING                       # re-listing: stale, still answering lists
    assert stamp.current() is None
    bindings.state, bindings.stale_since = SYNCED, 5.0
    assert stamp.current() is None
    bindings.stale_since = None
    assert stamp.current() is not None
    del cache.stores[("", "serviceaccounts")]       # the service may not list them
    assert stamp.current() is None and stamp.settled() is None
