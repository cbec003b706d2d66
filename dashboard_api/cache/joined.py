"""Joins of stores' indexes kept per event: which owners have a value found in two places.

The list status of workloads counts a workload as failed when one of its pods is not ready and
has a Warning event, else pending when one of its pods pends (summaries.workloads): for
replica sets, the controllers of the pods in both the pod store's "unready" index and the
event store's "warned" index, and the keys of the pods' "pending" index; for deployments, the
deployments owning such replica sets. Met per page, that cost one Python step per such pod or
replica set (thousands under churn, 20 ms of a replica-set page at 150,000 pods; issue #30);
kept here per event, a page reads the sets whole. Meeting every workload of a page's scope
with the sets still cost a lookup each (66,000 a replica-set page at 150,000 pods): ``Counted``
keeps, per namespace, how many workloads each set holds.

Both classes watch what they join (``watchers``: ``added(source, value, row, first)`` and
``removed(source, value, row, last)`` per row of an index; ``first``/``last`` when the value's
bucket appears or empties) and are watched the same way (a value: an owner, its first and last
link). A full LIST swapping an index's buckets in rebuilds what depends on it (``reset``,
O(what it holds) on the event loop, once per full LIST of a kind joined). Changed on the event
loop only; readers in the executor read ``owners()``, a view of a dict replaced whole by
``reset``.
"""

from dashboard_api.cache.summed import Summed
from dashboard_api.kinds import joins
from dashboard_api.summaries.common import uid


def join_stores(stores):
    """Keeps the joins that kinds/joins.py declares (JOINED, LIFTED, COUNTED, SUMMED) whose
    kinds are all cached in ``stores`` ({kind name: Store}): each in its first kind's
    ``joins``, with the other stores it reads (ScopeRead.joined answers only for related reads
    of those)."""
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
        found, others = _source(children, source)
        parents.joins[name] = (Lifted(found, parents.indexes[index]), (children,) + others)
    for name, (kind, source_kind, failing, pending) in joins.COUNTED.items():
        counted, sources = stores.get(kind), stores.get(source_kind)
        if counted is None or sources is None or not all(
                source in sources.joins or source in sources.indexes
                for source in (failing, pending)):
            continue
        (failed, reads), (pends, more) = _source(sources, failing), _source(sources, pending)
        sources.joins[name] = (Counted(counted, failed, pends),
                              reads + tuple(r for r in more if r not in reads))
    for name, (kind, index, selector, parts_of, width) in joins.SUMMED.items():
        store = stores.get(kind)
        if store is not None and index in store.indexes:
            store.joins[name] = (Summed(store.indexes[index], selector, parts_of, width), ())


def _source(store, name):
    """(the store's join or index ``name``, the other stores a join reads)."""
    if name in store.joins:
        return store.joins[name]
    return store.indexes[name], ()


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


class Counted:
    """Per namespace, how many objects of a store (workloads) are in ``failing`` and how many
    are in ``pending`` but not in ``failing`` (each a join or an index whose values are owners):
    the failed and pending counts of the workloads' list status
    (workloads.owned_status_counted). A page reads one pair per namespace, where meeting every
    workload of the scope with the two sets cost a lookup each (66,000 a replica-set page at
    150,000 pods; issue #30).

    Watches the store (its rows in and out) and both sources (an owner's first link or row in,
    its last out), each change moving one owner between none, pending and failed. A full LIST
    of any of them recounts (``reset``: O(failing + pending), and O(the store) when it is the
    store's). Changed on the event loop only; a reader elsewhere gets a namespace's pair whole
    (``count``)."""

    def __init__(self, store, failing, pending):
        self.store = store
        self.failing = failing
        self.pending = pending
        self.namespace_of = {}      # UID -> namespace, of the store's objects
        self.counts = {}            # namespace -> (failed, pending), when either is not 0
        self._rows = None           # the store's rows ``namespace_of`` was made of
        for source in (store, failing, pending):
            source.watchers.append(self)
        self.reset()

    def count(self, namespace):
        """(failed, pending) of the namespace's objects."""
        return self.counts.get(namespace, _NONE)

    def added(self, source, value, row, first):
        if source is self.store:
            owner = uid(row.obj)
            if owner:
                self.namespace_of[owner] = row.namespace
                self._move(owner, _NONE, self._state(owner, False, False))
        elif first:
            self._move(value, self._state(value, source is self.failing,
                                          source is self.pending), self._state(value))

    def removed(self, source, value, row, last):
        if source is self.store:
            owner = uid(row.obj)
            if owner and self.namespace_of.get(owner) == row.namespace:
                self._move(owner, self._state(owner), _NONE)
                del self.namespace_of[owner]
        elif last:
            self._move(value, self._state(value, gone=source), self._state(value))

    def _state(self, owner, not_failing=False, not_pending=False, gone=None):
        """(1, 0) failed, (0, 1) pending, else (0, 0): ``owner`` now, or as it was before it
        entered a source (``not_...``) or left one (``gone``)."""
        if gone is self.failing or (not not_failing and owner in self.failing.buckets):
            return _FAILED
        if gone is self.pending or (not not_pending and owner in self.pending.buckets):
            return _PENDING
        return _NONE

    def _move(self, owner, before, after):
        namespace = self.namespace_of.get(owner)
        if before is after or namespace is None:
            return
        failed, pending = self.counts.get(namespace, _NONE)
        failed += after[0] - before[0]
        pending += after[1] - before[1]
        if failed or pending:
            self.counts[namespace] = (failed, pending)
        else:
            self.counts.pop(namespace, None)

    def reset(self):
        """Recounted (after a full LIST swapped the store's rows or a source's in)."""
        rows = self.store.rows
        if rows is not self._rows:
            self._rows = rows
            self.namespace_of = {owner: row.namespace for row in rows.values()
                                 for owner in (uid(row.obj),) if owner}
        counts = {}
        namespace_of = self.namespace_of
        for owner in self.failing.buckets.keys() | self.pending.buckets.keys():
            namespace = namespace_of.get(owner)
            if namespace is not None:
                failed, pending = counts.get(namespace, _NONE)
                if owner in self.failing.buckets:
                    failed += 1
                else:
                    pending += 1
                counts[namespace] = (failed, pending)
        self.counts = counts


_NONE, _PENDING, _FAILED = (0, 0), (0, 1), (1, 0)
