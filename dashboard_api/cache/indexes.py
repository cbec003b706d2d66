"""The join indexes a kind declares (``Kind.indexes``): a store's rows grouped by a value of their
object (``Index``: a controller's UID, a node name), or, for one field's value, kept sorted for
the field selectors on it (cache/fieldindex.py); ``Lookup`` reads one within a scope."""

from dashboard_api.cache import refit
from dashboard_api.cache.fieldindex import FieldIndex
from dashboard_api.cache.rows import bucket_key
from dashboard_api.query.fields import Field


class Index:
    """Rows grouped by a value of their object (a controller's UID, a node name...).

    Buckets are changed in place on the event loop; a reader elsewhere copies a bucket with
    one ``list(...)`` call, which runs no Python code and so sees it whole."""

    def __init__(self, value_of):
        self.value_of = value_of
        self.buckets = {}   # value -> {(namespace + "/", name): Row}
        self.watchers = []  # told of every row added and removed (cache/joined.py)
        self._size = 0      # the buckets' table's bytes when last made at its natural size
        # (cache/refit.py: buckets come and go, an object's events, the pods not ready)

    def add(self, row, key=None):
        """``key``: the row's bucket key (``bucket_key``), when the caller made it already (one
        tuple for every index of the row)."""
        if key is None:
            key = bucket_key(row)
        if not self.watchers:
            _bucket_row(self.buckets, self.value_of, row, key)
        else:
            for value in self.value_of(row.obj):
                bucket = self.buckets.get(value)
                first = bucket is None
                if first:
                    bucket = self.buckets[value] = {}
                bucket[key] = row
                for watcher in self.watchers:
                    watcher.added(self, value, row, first)
        self.buckets, self._size = refit.refit(self.buckets, self._size)

    def remove(self, row):
        for value in self.value_of(row.obj):
            bucket = self.buckets.get(value)
            if bucket:
                bucket.pop((row.namespace + "/", row.name), None)
                if not bucket:
                    self.buckets.pop(value, None)
                for watcher in self.watchers:
                    watcher.removed(self, value, row, not bucket)

    def replace(self, old, new, key):
        """``new`` (the object of ``old``, changed) in ``old``'s place in its buckets, when it
        has the same values and no watcher is told (a watcher hears a row out, then in); False,
        nothing done, otherwise. A removal and an insertion of the same key leave a dummy entry
        behind, and a bucket churned so grows to twice its rows' table (issue #41's soak: the
        pods' buckets by controller, +3.8 MiB at 150,000 pods after 720,000 changes)."""
        if self.watchers:
            return False
        values = self.value_of(old.obj)
        if values != self.value_of(new.obj):
            return False
        for value in values:
            bucket = self.buckets.get(value)
            if bucket is None or key not in bucket:
                return False   # then out and in (what was put here is taken out with old)
            bucket[key] = new
        return True

    def state_of(self, rows, keys):
        """The buckets of ``rows`` (a full LIST's, in the executor), ``keys`` their bucket
        keys (made once for all indexes): a pure function of them."""
        buckets = {}
        for row, key in zip(rows, keys):
            _bucket_row(buckets, self.value_of, row, key)
        return buckets

    def swap(self, buckets):
        """A full LIST's buckets in, whole."""
        self.buckets = buckets
        self._size = refit.fitted(buckets)
        for watcher in self.watchers:
            watcher.reset()

    def get(self, value):
        """The rows of ``value`` in the store's order."""
        bucket = self.buckets.get(value)
        if not bucket:
            return ()
        return [row for _key, row in sorted(list(bucket.items()))]



class Lookup:
    """``get(value, default)`` -> the objects of an index bucket within the namespaces."""

    def __init__(self, index, namespaces):
        self.index = index
        self.namespaces = namespaces

    def __contains__(self, value):
        """Whether the index has objects for ``value`` (in any namespace: a cheap test before
        ``get``)."""
        return value in self.index.buckets

    def uids(self):
        """The values the index has objects for (in any namespace), as a set-like view."""
        return self.index.buckets.keys()

    def unordered(self, value):
        """The objects of ``value``'s bucket in any namespace, in no order: for a set made of
        them, without the sort of ``get`` (one ``list`` call copies the bucket whole)."""
        return [row.obj for row in list(self.index.buckets.get(value, {}).values())]

    def get(self, value, default=()):
        rows = self.index.get(value)
        if self.namespaces is not None:
            rows = [r for r in rows if r.namespace in self.namespaces]
        return [r.obj for r in rows] or default


def _bucket_row(buckets, value_of, row, key):
    for value in value_of(row.obj):
        bucket = buckets.get(value)
        if bucket is None:
            bucket = buckets[value] = {}
        bucket[key] = row


def make_index(value_of):
    """The index a spec declares: one field's (query/fields.py Field) kept sorted for the
    selectors on it (FieldIndex), any other as buckets summaries look up (Index)."""
    return FieldIndex(value_of) if isinstance(value_of, Field) else Index(value_of)


def index_state(index):
    return index.lists if isinstance(index, FieldIndex) else index.buckets


