"""A join of two stores' indexes kept per event: the owners of the values both hold.

The list status of workloads owning their pods counts a workload as failed when one of its pods
is not ready and has a Warning event (summaries.workloads.list_status): the controllers of the
pods in both the pod store's "unready" index and the event store's "warned" index. Met per
page, that set cost one Python step per such pod (thousands under churn, 20 ms of a replica-set
page at 150,000 pods; issue #30); kept here per event, a page reads it whole.

``Joined`` watches both indexes (``Index.watchers``): a value's bucket appearing in one while
the other has it links the value to its owner (``owner_of`` of the left index's row), a bucket
vanishing from either unlinks it; ``counts`` is owner -> values linked. A full LIST swapping
either index's buckets in rebuilds it (``reset``: O(values in both), on the event loop, once
per full LIST of either kind). Changed on the event loop only; readers in the executor read
``owners()``, a view of a dict replaced whole by ``reset``.
"""

from dashboard_api.spec import joins


def join_stores(stores):
    """Keeps the joins of ``stores`` ({kind name: Store}) that spec.joins.JOINED declares
    and both of whose kinds are cached: each in its first kind's ``joins``."""
    for name, (kind, index, other, other_index, owner_of) in joins.JOINED.items():
        left, right = stores.get(kind), stores.get(other)
        if left is not None and right is not None:
            left.joins[name] = (Joined(left.indexes[index], right.indexes[other_index],
                                       owner_of), right)


class Joined:
    def __init__(self, left, right, owner_of):
        self.left = left            # Index whose rows give the owner (pods' "unready")
        self.right = right          # Index met with it (events' "warned")
        self.owner_of = owner_of    # slim object -> owner's UID, or None
        self.linked = {}            # value -> owner (None: it has none) of values in both
        self.counts = {}            # owner -> values of it linked
        left.watchers.append(self)
        right.watchers.append(self)
        self.reset()

    def owners(self):
        """The owners of at least one value in both indexes, as a set-like view."""
        return self.counts.keys()

    def appeared(self, index, value, row):
        """``value``'s bucket was made in ``index`` (``row`` its first row)."""
        if index is self.left:
            if value in self.right.buckets:
                self._link(value, row)
        else:
            bucket = self.left.buckets.get(value)
            if bucket:
                self._link(value, next(iter(bucket.values())))

    def vanished(self, index, value):
        """``value``'s bucket in ``index`` became empty."""
        owner = self.linked.pop(value, self)
        if owner is self or owner is None:
            return
        left = self.counts[owner] - 1
        if left:
            self.counts[owner] = left
        else:
            del self.counts[owner]

    def _link(self, value, row):
        if value in self.linked:
            return
        owner = self.linked[value] = self.owner_of(row.obj)
        if owner is not None:
            self.counts[owner] = self.counts.get(owner, 0) + 1

    def reset(self):
        """Rebuilt from both indexes (after a full LIST swapped either's buckets in), then
        put in whole: a reader never sees it half made."""
        linked, counts = {}, {}
        left = self.left.buckets
        for value in left.keys() & self.right.buckets.keys():
            owner = linked[value] = self.owner_of(next(iter(left[value].values())).obj)
            if owner is not None:
                counts[owner] = counts.get(owner, 0) + 1
        self.linked, self.counts = linked, counts
