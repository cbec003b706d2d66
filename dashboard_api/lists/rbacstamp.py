"""What the watch cache knows of the objects that decide who may do what: a stamp that changes
with any of them, so that a list right the API server answered can be kept while it cannot have
changed (lists/access.py, ``--access-cache-max-age``).

The cluster's RBAC (roles, bindings and their cluster-wide kinds) decides what a person may list,
and a service account's deletion ends its tokens: the watch cache holds all five kinds (the
service identity lists and watches them: conf/kubernetes/rbac.yaml), and each store counts its
changes (``Store.generation``). The stamp is those counts, and only while every one of the five
stores is current: synced, its watch live. A store re-listing, stale, not cached (the service
may not list it) or absent gives no stamp, and then answers last their short TTL only.

A stamp vouches for an answer only if it had already held for ``settle`` seconds when the
review was asked (``settled``): the API server may answer a review from before a change this
gateway's watch has already seen (it keeps a token it authenticated for 10 s, so a deleted
service account's token still passes for that long; its authorizer reads RBAC through an
informer of its own), and such an answer must not be kept under the stamp of after the change.
So for SETTLE seconds after any change, answers last the TTL only.
"""

import time

from dashboard_api.cache.store import SYNCED

# (group, plural) of what decides a list right, or ends a token's.
AUTHORIZING = (("rbac.authorization.k8s.io", "roles"),
               ("rbac.authorization.k8s.io", "rolebindings"),
               ("rbac.authorization.k8s.io", "clusterroles"),
               ("rbac.authorization.k8s.io", "clusterrolebindings"),
               ("", "serviceaccounts"))
# Seconds a stamp must have held before an answer asked under it is vouched for: beyond the
# API server's token cache (10 s) and its authorizer's informer lag.
SETTLE = 15.0


class RbacStamp:
    def __init__(self, cache, settle=SETTLE, clock=time.monotonic):
        self.cache = cache
        self.settle = settle
        self.clock = clock
        self._seen = None     # the last stamp seen, and since when (clock)
        self._since = 0.0

    def current(self):
        """The stamp now, or None when a store of AUTHORIZING is not current."""
        parts = []
        for group, plural in AUTHORIZING:
            store = self.cache.synced_store(group, plural)
            if store is None or store.state != SYNCED or store.stale_since is not None:
                return None
            parts.append((id(store), store.generation))   # a store made again counts anew
        stamp = tuple(parts)
        if stamp != self._seen:
            self._seen, self._since = stamp, self.clock()
        return self._seen   # one object while it holds: the answers kept under it share it

    def settled(self):
        """The stamp now if it has held for ``settle`` seconds (as far as this process has
        seen: a change first seen now counts from now), else None."""
        stamp = self.current()
        if stamp is None or self.clock() - self._since < self.settle:
            return None
        return stamp
