"""Joins of stores' indexes kept per event: which owners have a value found in two places.

The list status of workloads counts a workload as failed when one of its pods is not ready and
has a Warning event, else pending when one of its pods pends (summaries.workloads): for
replica sets, the controllers of the pods in both the pod store's "unready" index and the
event store's "warned" index, and the keys of the pods' "pending" index; for deployments, the
deployments owning such replica sets. Met per page, that cost one Python step per such pod or
replica set (thousands under churn, 20 ms of a replica-set page at 150,000 pods; issue #30);
kept here per event, a page reads the sets whole.

Both classes watch what they join (``watchers``: ``added(source, value, row, first)`` and
``removed(source, value, row, last)`` per row of an index; ``first``/``last`` when the value's
bucket appears or empties) and are watched the same way (a value: an owner, its first and last
link). A full LIST swapping an index's buckets in rebuilds what depends on it (``reset``,
O(what it holds) on the event loop, once per full LIST of a kind joined). Changed on the event
loop only; readers in the executor read ``owners()``, a view of a dict replaced whole by
``reset``.
"""

from dashboard_api.spec import joins
from dashboard_api.summaries.common import uid


def join_stores(stores):
    """Keeps the joins that spec.joins declares (JOINED, LIFTED) whose kinds are all cached
    in ``stores`` ({kind name: Store}): each in its first kind's ``joins``, with the other
    stores it reads (Related.joined answers only for related reads of those)."""
    for name, (kind, index, other, other_index, owner_of) in joins.JOINED.items():
        left, right = stores.get(kind), stores.get(other)
        if left is not None and right is not None:
            joined = Joined(left.indexes[index], right.indexes[other_index], owner_of)
            left.joins[name] = (joined, (right,))
            right.joins[name] = (joined, ())   # asked by a read of the first kind's store
    for name, (kind, index, source_kind, source) in joins.LIFTED.items():
        parents, children = stores.get(kind), stores.get(source_kind)
        if parents is None or children is None:
            continue
        if source in children.joins:
            found, others = children.joins[source]
            reads = (children,) + others
        else:
            found, reads = children.indexes[source], (children,)
        parents.joins[name] = (Lifted(found, parents.indexes[index]), reads)


class _Owners:
    """Owner -> links counted, telling its watchers when an owner's first link is made and
    its last one goes."""

    def __init__(self):
        self.counts = {}
        self.watchers = []

    def owners(self):
        """The owners with at least one link, as a set-like view."""
        return self.counts.keys()

    def count(self, owner):
        """The links of ``owner``."""
        return self.counts.get(owner, 0)

    @property
    def buckets(self):
        return self.counts

    def _count(self, owner, step):
        left = self.counts.get(owner, 0) + step
        if left:
            self.counts[owner] = left
        else:
            del self.counts[owner]
        if left == (1 if step > 0 else 0):
            for watcher in self.watchers:
                if step > 0:
                    watcher.added(self, owner, None, True)
                else:
                    watcher.removed(self, owner, None, True)

    def _counted(self, linked):
        """Owner -> links of ``linked`` (value -> owner, None: none), put in whole."""
        counts = {}
        for owner in linked.values():
            if owner is not None:
                counts[owner] = counts.get(owner, 0) + 1
        self.counts = counts
        for watcher in self.watchers:
            watcher.reset()


class Joined(_Owners):
    """The owners (``owner_of`` the left index's row) of the values in both indexes: the
    controllers of the not-ready pods with a Warning event."""

    def __init__(self, left, right, owner_of):
        super().__init__()
        self.left = left            # Index whose rows give the owner (pods' "unready")
        self.right = right          # Index met with it (events' "warned")
        self.owner_of = owner_of    # slim object -> owner's UID, or None
        self.linked = {}            # value -> owner (None: it has none) of values in both
        left.watchers.append(self)
        right.watchers.append(self)
        self.reset()

    def added(self, source, value, row, first):
        if not first or value in self.linked:
            return
        if source is self.left:
            if value in self.right.buckets:
                self._link(value, row)
        else:
            bucket = self.left.buckets.get(value)
            if bucket:
                self._link(value, next(iter(bucket.values())))

    def removed(self, source, value, row, last):
        if last:
            owner = self.linked.pop(value, self)
            if owner is not self and owner is not None:
                self._count(owner, -1)

    def _link(self, value, row):
        owner = self.linked[value] = self.owner_of(row.obj)
        if owner is not None:
            self._count(owner, 1)

    def reset(self):
        """Rebuilt from both indexes (after a full LIST swapped either's buckets in)."""
        left = self.left.buckets
        self.linked = {value: self.owner_of(next(iter(left[value].values())).obj)
                       for value in left.keys() & self.right.buckets.keys()}
        self._counted(self.linked)


class Lifted(_Owners):
    """The parents of the children with a value in ``source`` (an index, or a Joined), the
    parent of a child being the value it has in ``parents`` (an index by controller): the
    deployments owning a replica set that has a warned not-ready pod, or a pending one."""

    def __init__(self, source, parents):
        super().__init__()
        self.source = source
        self.parents = parents
        self.parent_of = {}         # child's UID -> its parent, of every child with one
        self.linked = {}            # child -> parent, of the children in ``source``
        source.watchers.append(self)
        parents.watchers.append(self)
        self.reset()

    def added(self, source, value, row, first):
        if source is self.parents:
            child = uid(row.obj)
            self._unlink(child)
            self.parent_of[child] = value
            if child in self.source.buckets:
                self._link(child, value)
        elif first and value in self.parent_of:
            self._link(value, self.parent_of[value])

    def removed(self, source, value, row, last):
        if source is self.parents:
            child = uid(row.obj)
            if self.parent_of.get(child) == value:
                del self.parent_of[child]
                self._unlink(child)
        elif last:
            self._unlink(value)

    def _link(self, child, parent):
        if child not in self.linked:
            self.linked[child] = parent
            self._count(parent, 1)

    def _unlink(self, child):
        parent = self.linked.pop(child, None)
        if parent is not None:
            self._count(parent, -1)

    def reset(self):
        """Rebuilt from the parents index and the source (after a full LIST of either)."""
        self.parent_of = {uid(row.obj): value for value, bucket in self.parents.buckets.items()
                          for row in bucket.values()}
        self.linked = {child: self.parent_of[child]
                       for child in self.parent_of.keys() & self.source.buckets.keys()}
        self._counted(self.linked)
