"""The cached objects of one resource, kept in the API server's own order, with indexes.

A ``Row`` is one slim object and the keys a list sorts and filters it by, computed once when the
object arrives (not on every request). Rows are never changed once made: an update replaces the
row, so readers outside the event loop (the list selection runs in the executor) see whole rows.
Changes happen on the event loop only.

Order: the API server lists a resource in the order of its storage keys, ``namespace/name``; a
list of several named namespaces is the concatenation of their lists in the order asked. The
store keeps each namespace's names sorted and namespaces in key order, so ``scope`` gives that
order without sorting.

Staleness and re-lists (issue #19), as client-go's reflector: once a store has synced it keeps
answering while its reflector re-lists (after a 410, a failed watch, an API server restart); when
the new LIST completes, ``relist`` brings the store to it without holding the event loop: what
changed is found in the executor, then a few changes are applied as events (in batches, pages
answered in between) and many are built whole in the executor and swapped in. The re-list's rows
of unchanged objects (same uid and resourceVersion) are the live rows themselves (``reusable``),
so meanwhile the process holds one store plus what changed, not two. ``stale_since`` says since
when the store is not known to be current (None while a watch is established and streaming);
``first_sync`` is set once the store has synced, or once it is known it will not
(unavailable), for the requests that wait for it.
"""

import asyncio
import bisect
import collections
import functools
import gc
import time

from dashboard_api import dataselect
from dashboard_api.cache import slim
from dashboard_api.cache.fieldindex import FieldIndex
from dashboard_api.cache.sorted import ListOrder, SortedIndex, _slashed, filtered_index
from dashboard_api.spec.fields import Field

# Sorted indexes kept per store (one per sort spec asked for), the least recently used dropped:
# about 30 MiB each at 150,000 pods (the index and its per-namespace parts).
SORTED_INDEXES = 4
# Stores of this many rows or more build a sorted index in the executor (ensure_index).
OFF_LOOP_BUILD = 5000
# Filtered indexes kept per store (one per filters and sort spec asked for), the least recently
# used dropped; each holds at most 1/FILTER_BROAD of the rows: a filter matching more is
# answered by a walk of the sorted index, which then costs at most FILTER_BROAD x its matches.
FILTERED_INDEXES = 8
FILTER_BROAD = 4

# A re-list (relist) whose changes are at most this many, or a quarter of the store, applies them
# as events, RELIST_BATCH at a time with the loop free between batches; a larger one builds the
# new state in the executor and swaps it in (first syncs too).
SMALL_RELIST = 5000
SMALL_SHARE = 0.25
RELIST_BATCH = 1000
RELIST_TRIES = 3   # executor computations the store changed under; then a plain replace

SYNCING, SYNCED, UNAVAILABLE = "syncing", "synced", "unavailable"


class Row:
    """``keys``: (filter text, sort value, ...) of each property (dataselect.keys_of), or None
    until the list computes them from the object's summary; ``item``: that summary, when the
    list computed it."""

    __slots__ = ("obj", "namespace", "name", "keys", "item", "facts")

    def __init__(self, obj, namespace, name, keys, item=None, facts=None):
        self.obj = obj
        self.namespace = namespace
        self.name = name
        self.keys = keys
        self.item = item
        self.facts = facts   # kind.status_facts(obj), when the kind has them


def row_of(kind, obj, previous=None):
    """The row of a slim object: the list's property keys read from its own summary (every
    list property depends on the object alone). ``previous``: the row this one replaces,
    whose keys it shares where they are equal (slim.pooled does so for the object)."""
    meta = obj.get("metadata") or {}
    keys = slim.pooled_keys(dataselect.keys_of(kind.key_item(obj), kind.properties)) \
        if kind else ()
    if previous is not None and previous.keys and len(previous.keys) == len(keys):
        keys = _kept(keys, previous.keys)
    facts = kind.status_facts(obj) if kind is not None and kind.status_facts else None
    return Row(obj, meta.get("namespace") or "", meta.get("name") or "", keys, facts=facts)


def _kept(keys, old):
    """``keys`` with each value equal to ``old``'s at its place (of the same type) taken from
    ``old``; ``old`` itself when all are."""
    kept = tuple(before if type(before) is type(value) and before == value else value
                 for value, before in zip(keys, old))
    return old if all(a is b for a, b in zip(kept, old)) else kept


class Index:
    """Rows grouped by a value of their object (a controller's UID, a node name...).

    Buckets are changed in place on the event loop; a reader elsewhere copies a bucket with
    one ``list(...)`` call, which runs no Python code and so sees it whole."""

    def __init__(self, value_of):
        self.value_of = value_of
        self.buckets = {}   # value -> {(namespace + "/", name): Row}
        self.watchers = []  # told of every row added and removed (cache/joined.py)

    def add(self, row, key=None):
        """``key``: the row's bucket key (``bucket_key``), when the caller made it already (one
        tuple for every index of the row)."""
        if key is None:
            key = bucket_key(row)
        if not self.watchers:
            _bucket_row(self.buckets, self.value_of, row, key)
            return
        for value in self.value_of(row.obj):
            bucket = self.buckets.get(value)
            first = bucket is None
            if first:
                bucket = self.buckets[value] = {}
            bucket[key] = row
            for watcher in self.watchers:
                watcher.added(self, value, row, first)

    def remove(self, row):
        for value in self.value_of(row.obj):
            bucket = self.buckets.get(value)
            if bucket:
                bucket.pop((row.namespace + "/", row.name), None)
                if not bucket:
                    self.buckets.pop(value, None)
                for watcher in self.watchers:
                    watcher.removed(self, value, row, not bucket)

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
        for watcher in self.watchers:
            watcher.reset()

    def get(self, value):
        """The rows of ``value`` in the store's order."""
        bucket = self.buckets.get(value)
        if not bucket:
            return ()
        return [row for _key, row in sorted(list(bucket.items()))]


class Scoped(list):
    """The rows (or objects) of one store in one scope, as a list that also says which version
    of the store it is (``view_key``, for selection.Views) and brings the store's indexes
    (``lookup``, for summaries.common.Related), limited to the scope's namespaces."""

    def __init__(self, items, store, namespaces, objects=False):
        super().__init__(items)
        self.view_key = (id(store), store.version(namespaces), namespaces)
        self._store = store
        self._namespaces = frozenset(namespaces) if namespaces else None
        self._objects = objects

    def lookup(self, index):
        return Lookup(self._store.indexes[index], self._namespaces)


class Related:
    """The objects of one store in one scope as a related read (summaries.common.Related)
    answers them: ``lookup`` (the store's indexes, kept per event) and ``view_key`` cost
    nothing, the list of every object is made only when something iterates it (issue #30).

    Made eagerly, a pod page paid for a list of every cached event each time an event had
    arrived since the last page (the store's scope lists go with any change): at 200,000 events
    and 50 a second, about 30 ms of a page that otherwise costs 1.5. Summaries join through
    ``lookup`` (warnings, owned pods), so most never iterate. The list is made on the event
    loop (rows change there only): from another thread (a summary in the executor) it is asked
    of the loop and waited for."""

    WAIT = 60.0   # seconds an executor thread waits for the loop to make the list

    def __init__(self, store, namespaces):
        self._store = store
        self._namespaces = tuple(namespaces)
        self.view_key = (id(store), store.version(self._namespaces), self._namespaces)
        self._items = None
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:   # made outside a loop (tests): the caller's thread is the loop's
            self._loop = None

    def lookup(self, index):
        names = frozenset(self._namespaces) if self._namespaces else None
        return Lookup(self._store.indexes[index], names)

    def joined(self, name, *others):
        """The store's join ``name`` (cache/joined.py, kept per event, all namespaces) when
        ``others`` are related reads of the stores it reads, in order, else None (then the
        caller meets them itself)."""
        found = self._store.joins.get(name)
        if found is None or len(others) != len(found[1]) or not all(
                isinstance(other, Related) and other._store is store
                for other, store in zip(others, found[1])):
            return None
        return found[0]

    def _list(self):
        if self._items is None:
            if self._loop is None or _running_loop() is self._loop:
                self._items = self._scope()
            else:
                self._items = asyncio.run_coroutine_threadsafe(
                    self._made(), self._loop).result(self.WAIT)
        return self._items

    def _scope(self):
        return self._store.scope(self._namespaces, objects=True)

    async def _made(self):
        return self._scope()

    def __iter__(self):
        return iter(self._list())

    def __len__(self):
        if self._items is not None:
            return len(self._items)
        return len(ScopeView(self._store, self._namespaces))

    def __bool__(self):
        return len(self) > 0

    def __getitem__(self, index):
        return self._list()[index]

    def __eq__(self, other):
        return list(self._list()) == list(other)

    __hash__ = None


def _running_loop():
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


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


class Store:
    """One resource's rows; ``generation`` counts the changes applied (views compare it)."""

    def __init__(self, kind, indexes=None, clock=time.monotonic):
        self.kind = kind
        self.state = SYNCING
        self.synced_once = False
        self.clock = clock
        self.stale_since = clock()  # not current since then; None: current
        self._first_sync = None
        self.generation = 0
        self.resource_version = None
        self.events = 0
        self.rows = {}              # (namespace, name) -> Row
        self.names = {}             # namespace -> sorted [name]
        self._namespace_order = None   # names' keys in list order, until one comes or goes
        self.indexes = {name: _index(fn) for name, fn in (indexes or {}).items()}
        self.joins = {}             # name -> (a join, the stores it reads), cache/joined.py
        self.watchers = []          # as an index's, of every row (value None), cache/joined.py
        self._scopes = {}           # (namespaces, objects?) -> Scoped, until the next change
        self._stamps = {}           # namespace -> generation of its last change
        self._replaced = 0          # generation of the last full LIST
        self._sorted = collections.OrderedDict()   # sort spec -> SortedIndex (issue #19)
        self._tally = None          # namespace -> list status counters, once asked for
        self._building = {}         # index key -> (future, events meanwhile), being built
        self._filtered = collections.OrderedDict()   # (spec, filters) -> FilteredIndex
        self._broad = collections.OrderedDict()      # (spec, filters) found broad -> changes then
        self._changes = 0           # objects changed by events or re-lists (for _broad)

    def __len__(self):
        return len(self.rows)

    # --- state -----------------------------------------------------------------------------

    def set_state(self, name, since=None):
        """The reflector says where it is: ``synced`` (a LIST completed, or a watch is
        established), ``syncing`` (listing, or the watch failed) or ``unavailable`` (the
        service identity may not list it). A store that has synced once goes on answering
        while it is syncing again: it is only stale, since ``since`` (a time of ``clock``:
        when a watch cut for silence last heard anything) or now."""
        if name == SYNCED:
            self.stale_since = None
            self.synced_once = True
        elif self.stale_since is None:
            self.stale_since = self.clock() if since is None else min(since, self.clock())
        self.state = name
        if name in (SYNCED, UNAVAILABLE) and self._first_sync is not None:
            self._first_sync.set()

    def serving(self):
        """Whether lists may be answered from this store now (stale or not)."""
        return self.state == SYNCED or (self.state == SYNCING and self.synced_once)

    def staleness(self):
        """Seconds since the store was last known current (0 while it is)."""
        if self.stale_since is None:
            return 0.0
        return max(0.0, self.clock() - self.stale_since)

    async def wait_first_sync(self, timeout):
        """Returns True once the store serves, False when it will not (unavailable) or after
        ``timeout`` seconds."""
        if self.serving():
            return True
        if self.state == UNAVAILABLE:
            return False
        if self._first_sync is None:
            self._first_sync = asyncio.Event()
        try:
            await asyncio.wait_for(self._first_sync.wait(), timeout)
        except asyncio.TimeoutError:
            pass
        return self.serving()

    # --- changes (event loop only) ---------------------------------------------------------

    def replace(self, rows, resource_version):
        """The result of a full LIST: the store holds exactly ``rows`` afterwards. On the event
        loop, O(n log n): tests and the fallback of ``relist``."""
        self.rows = {(row.namespace, row.name): row for row in rows}
        names, buckets = _state_of(self.rows, self._builders())
        self._swap(self.rows, names, buckets, (), None, resource_version)

    def _builders(self):
        """{index name: state_of(rows)}: each index's state of a full LIST, made in the
        executor."""
        return {name: index.state_of for name, index in self.indexes.items()}

    def _swap(self, rows, names, buckets, sorted_indexes, tally, resource_version):
        """A whole new state in, O(1) on the event loop: every selection's version changes.
        Returns the previous state's parts, for ``_drop`` (freeing them holds the GIL)."""
        previous = [self.rows, self.names, self._tally, *self._sorted.values(),
                    *self._filtered.values()]
        previous += [_state(index) for index in self.indexes.values()]   # rows first
        self.rows = rows
        self.names = names
        self._namespace_order = None
        for name, index in self.indexes.items():
            index.swap(buckets[name])
        for watcher in self.watchers:
            watcher.reset()
        self.resource_version = resource_version
        self._changed()
        self._stamps = {}
        self._replaced = self.generation
        self._index_reset()
        self._sorted.update(sorted_indexes)
        self._tally = tally
        freeze_heap()
        return previous

    async def relist(self, rows, resource_version, run):
        """The result of a full LIST, without holding the event loop (issue #19): the
        difference with the live rows is computed by ``run`` (the executor; the re-list's rows
        of unchanged objects are the live rows, ``reusable``, so "unchanged" is an ``is``
        test). A small one is applied as events, RELIST_BATCH at a time with the loop free in
        between (sorted indexes, counters and the other namespaces' selections kept); a large
        one, or the first sync, is built whole by ``run`` and swapped in. Readers may run
        meanwhile; should the store change under a computation (the ``generation`` moved), it
        is done again, at most RELIST_TRIES times, then ``replace`` does it on the loop.
        Returns whether the state was swapped whole."""
        for _ in range(RELIST_TRIES):
            generation = self.generation
            specs = list(self._sorted)
            counting = self._tally is not None
            changes, built = await run(
                _relist_plan, self.kind, self.rows, rows, self._builders(), specs, counting)
            if self.generation != generation:
                continue
            if built is None:
                await self._apply_changes(changes, resource_version)
                return False
            fresh, names, buckets, sorted_indexes, tally = built
            previous = self._swap(fresh, names, buckets, zip(specs, sorted_indexes), tally,
                                  resource_version)
            del fresh, names, buckets, sorted_indexes, tally, built
            await run(_drop, previous)
            return True
        self.replace(rows, resource_version)
        return True

    async def _apply_changes(self, changes, resource_version):
        """A re-list's (old, new) changes applied as events, the loop free between batches.
        Each change is let go of once applied, so the rows it replaced are freed batch by
        batch, not all at once at the end."""
        for start in range(0, len(changes), RELIST_BATCH):
            if start:
                await asyncio.sleep(0)
            touched = set()
            for i in range(start, min(start + RELIST_BATCH, len(changes))):
                old, new = changes[i]
                changes[i] = None
                row = new if new is not None else old
                self._change(row.namespace, row.name, new)
                touched.add(row.namespace)
            self._changed()
            for namespace in touched:
                self._stamps[namespace] = self.generation
        self.resource_version = resource_version

    # --- re-list (issue #19): no second full copy -----------------------------------------

    def reusable(self, obj):
        """The live row of ``obj`` (a decoded object of a re-list's page) when it is the same
        object (uid) at the same resourceVersion, else None: the re-list keeps that row rather
        than a new copy, so while it runs the process holds the old store plus only the rows
        that changed. Called in the LIST's worker: one dict lookup, and rows never change."""
        rows = self.rows
        if not rows:
            return None
        meta = obj.get("metadata")
        if not meta:
            return None
        version = meta.get("resourceVersion")
        if not version:
            return None
        row = rows.get((meta.get("namespace") or "", meta.get("name") or ""))
        if row is None:
            return None
        old = row.obj.get("metadata") or {}
        if old.get("resourceVersion") == version and old.get("uid") == meta.get("uid"):
            return row
        return None

    def apply(self, kind_of_event, row, resource_version):
        self._change(row.namespace, row.name, None if kind_of_event == "DELETED" else row)
        self.resource_version = resource_version
        self.events += 1
        self._changed()
        self._stamps[row.namespace] = self.generation

    def _change(self, namespace, name, new):
        """The object ``namespace/name`` becomes ``new`` (None: deleted), indexes included."""
        old = self.rows.get((namespace, name))
        if new is None:
            self._delete(namespace, name)
        else:
            self._put(new)
        self._index_event(old, new)

    def _put(self, row):
        key = (row.namespace, row.name)
        old = self.rows.get(key)
        if old is not None:
            for index in self.indexes.values():
                index.remove(old)
            for watcher in self.watchers:
                watcher.removed(self, None, old, True)
        else:
            names = self.names.get(row.namespace)
            if names is None:
                names = self.names[row.namespace] = []
                self._namespace_order = None
            bisect.insort(names, row.name)
        self.rows[key] = row
        bucket = bucket_key(row)
        for index in self.indexes.values():
            index.add(row, bucket)
        for watcher in self.watchers:
            watcher.added(self, None, row, True)

    def _delete(self, namespace, name):
        old = self.rows.pop((namespace, name), None)
        if old is None:
            return
        for index in self.indexes.values():
            index.remove(old)
        for watcher in self.watchers:
            watcher.removed(self, None, old, True)
        names = self.names.get(namespace)
        if names:
            i = bisect.bisect_left(names, name)
            if i < len(names) and names[i] == name:
                del names[i]
            if not names:
                del self.names[namespace]
                self._namespace_order = None

    def _changed(self):
        self.generation += 1
        self._scopes = {}

    def version(self, namespaces):
        """What a selection over ``namespaces`` (empty: all) depends on: a change in another
        namespace leaves the version of a namespace's selections as it was."""
        if not namespaces:
            return self.generation
        return tuple(max(self._stamps.get(ns, 0), self._replaced) for ns in namespaces)

    # --- reads -----------------------------------------------------------------------------

    def scope(self, namespaces, objects=False):
        """The rows (``objects``: their objects) of the namespaces (a tuple; empty: all) in
        the API server's list order. The list is shared by every reader until the next change:
        never modify it."""
        key = (tuple(namespaces), objects)
        found = self._scopes.get(key)
        if found is not None:
            return found
        if objects:
            items = [row.obj for row in self.scope(namespaces)]
        else:
            order = key[0] or self.namespace_order()
            rows = self.rows
            items = [rows[(ns, name)] for ns in order for name in self.names.get(ns, ())]
        if len(self._scopes) >= 32:
            self._scopes.clear()
        found = self._scopes[key] = Scoped(items, self, key[0], objects)
        return found

    def namespace_order(self):
        """The namespaces holding rows, in the API server's list order (by namespace + "/")."""
        if self._namespace_order is None:
            self._namespace_order = sorted(self.names, key=_slashed)
        return self._namespace_order

    # --- sorted indexes and list status counters (issue #19, item 4) -----------------------

    def _index_reset(self):
        """A full LIST replaced the rows: indexes and counters are rebuilt when next asked (or
        given by ``relist``, built in the executor)."""
        self._sorted.clear()
        self._filtered.clear()
        self._broad.clear()
        self._tally = None

    def _index_event(self, old, new):
        """One event: ``old`` (None: none) became ``new`` (None: deleted). O(log n)."""
        if old is None and new is None:
            return
        self._changes += 1
        for index in self._sorted.values():
            index.change(old, new)
        for index in self._filtered.values():
            index.change(old, new)
        for _future, log in self._building.values():
            log.append((old, new))
        if self._tally is not None:
            if old is not None:
                self._count(old, -1)
            if new is not None:
                self._count(new, 1)

    def sorted_index(self, spec, walked=False):
        """The SortedIndex of the rows for ``spec`` (built on first use, then kept per event;
        at most SORTED_INDEXES per store). No sort is the store's own order (ListOrder),
        unless the index is to be ``walked`` whole in the executor (selection.filtered_indexed)."""
        spec = tuple(spec)
        if not spec and not walked:
            return ListOrder(self)
        index = self._sorted.get(spec)
        if index is not None:
            self._sorted.move_to_end(spec)
            return index
        index = self._sorted[spec] = SortedIndex(spec, self.rows.values(), self.kind.properties)
        while len(self._sorted) > SORTED_INDEXES:
            self._sorted.popitem(last=False)
        return index

    async def ensure_index(self, spec, run, walked=False):
        """Makes sure the SortedIndex of ``spec`` exists; one of a large store is built in the
        executor (``_build_off_loop``), so the event loop never sorts the whole store.
        ``walked``: as for ``sorted_index``."""
        spec = tuple(spec)
        if (not spec and not walked) or spec in self._sorted or \
                len(self.rows) < OFF_LOOP_BUILD:
            return self.sorted_index(spec, walked)
        index, built = await self._build_off_loop(spec, functools.partial(
            _sorted_index, spec, self.kind.properties), run)
        if built and spec not in self._sorted:
            self._sorted[spec] = index
            while len(self._sorted) > SORTED_INDEXES:
                self._sorted.popitem(last=False)
        return self.sorted_index(spec, walked)

    async def ensure_filtered(self, spec, filters, props, run):
        """The FilteredIndex of ``filters`` sorted by ``spec``, kept per event from now on, or
        None when the filter is broad (then the caller walks the sorted index). A large
        store's is built in the executor (``_build_off_loop``)."""
        key = (tuple(spec), tuple(filters))
        index = self._filtered.get(key)
        if index is not None:
            self._filtered.move_to_end(key)
            return index
        decided = self._broad.get(key)
        if decided is not None and self._changes - decided <= len(self.rows) // FILTER_BROAD:
            return None        # still broad: not enough has changed since it was found so
        make = functools.partial(filtered_index, key[0], key[1], props, broad=FILTER_BROAD)
        if len(self.rows) < OFF_LOOP_BUILD:
            return self._keep_filtered(key, make(self.rows.values()))
        index, built = await self._build_off_loop(("filtered",) + key, make, run)
        if not built:          # built by another caller, or the rows kept being replaced
            return self._filtered.get(key)
        return self._keep_filtered(key, index)

    async def _build_off_loop(self, key, make, run):
        """(``make(rows)`` over a copy of the rows, run by ``run`` (the executor), with the
        events that arrived meanwhile applied to it (``change``), True); done again when a
        re-list swapped the rows in meanwhile, at most RELIST_TRIES times. Callers of the same
        ``key`` share one build: the others wait for it and get (None, False), as does the
        builder when every try was overtaken."""
        building = self._building.get(key)
        if building is not None:
            await asyncio.shield(building[0])
            return None, False
        future = asyncio.get_running_loop().create_future()
        log = []
        self._building[key] = (future, log)
        try:
            for _ in range(RELIST_TRIES):
                replaced = self._replaced
                del log[:]
                made = await run(make, list(self.rows.values()))
                if self._replaced == replaced:
                    if made is not None:
                        for old, new in log:
                            made.change(old, new)
                    return made, True
            return None, False
        finally:
            del self._building[key]
            future.set_result(None)

    def _keep_filtered(self, key, index):
        """Keeps a built FilteredIndex, or remembers that the filter was broad (bounded)."""
        if index is None:
            self._broad[key] = self._changes
            self._broad.move_to_end(key)
            while len(self._broad) > 64:
                self._broad.popitem(last=False)
            return None
        self._broad.pop(key, None)
        self._filtered[key] = index
        while len(self._filtered) > FILTERED_INDEXES:
            self._filtered.popitem(last=False)
        return index

    def _count(self, row, sign):
        _count(self.kind, self._tally, row, sign)

    def status_tally(self, namespaces):
        """(buckets counted from the rows' facts alone, {namespace: {bucket: {key: facts}}} of
        the rows whose bucket ``rel`` may change, by that bucket) over the namespaces
        (empty: all), for the kind's ``status_counted``; None when the kind has no
        ``status_split``. Counters are kept per event once first asked for."""
        kind = self.kind
        if kind is None or kind.status_split is None:
            return None
        if self._tally is None:
            self._tally = _tally_of(kind, self.rows.values())
            if self._tally is None:
                return None
        counts = collections.Counter()
        pending = {}
        for ns in (set(namespaces) if namespaces else list(self._tally)):
            tally = self._tally.get(ns)
            if tally is not None:
                counts.update(tally[0])
                if tally[1]:
                    pending[ns] = tally[1]
        return counts, pending

    def view(self, namespaces):
        """The rows of the namespaces, unread: a ScopeView (listing reads a page of it off a
        sorted index, or the whole scope)."""
        return ScopeView(self, tuple(namespaces))

    def related(self, namespaces):
        """The objects of the namespaces as a related read: unread until iterated (Related)."""
        return Related(self, namespaces)


class ScopeView:
    """A store's rows in a scope, not yet read: ``store`` and ``namespaces`` for a page off a
    sorted index, ``scoped()`` for every row in the API server's order (store.scope)."""

    def __init__(self, store, namespaces):
        self.store = store
        self.namespaces = namespaces

    def __len__(self):
        if not self.namespaces:
            return len(self.store.rows)
        names = self.store.names
        return sum(len(names.get(ns, ())) for ns in set(self.namespaces))

    def scoped(self):
        return self.store.scope(self.namespaces)


def bucket_key(row):
    """A row's key in index buckets: (namespace + "/", name), their order the API server's
    list order. One "ns/" string for all; one tuple per row for all its indexes (a pod is in
    two to five: ~56 bytes each saved)."""
    return (_slashed(row.namespace), row.name)


def _bucket_row(buckets, value_of, row, key):
    for value in value_of(row.obj):
        bucket = buckets.get(value)
        if bucket is None:
            bucket = buckets[value] = {}
        bucket[key] = row


def _index(value_of):
    """The index a spec declares: one field's (spec/fields.py Field) kept sorted for the
    selectors on it (FieldIndex), any other as buckets summaries look up (Index)."""
    return FieldIndex(value_of) if isinstance(value_of, Field) else Index(value_of)


def _state(index):
    return index.lists if isinstance(index, FieldIndex) else index.buckets


def _state_of(rows, builders):
    """(namespace -> sorted names, index name -> its state) of a rows dict."""
    names = {}
    for namespace, name in rows:
        names.setdefault(namespace, []).append(name)
    for values in names.values():
        values.sort()
    values = list(rows.values())
    keys = [bucket_key(row) for row in values] if builders else ()   # one per row, shared
    states = {index_name: state_of(values, keys) for index_name, state_of in builders.items()}
    return names, states


def _count(kind, tally, row, sign):
    found = tally.get(row.namespace)
    if found is None:
        found = tally[row.namespace] = (collections.Counter(), {})
    bucket, related = kind.status_split(row.facts)
    if bucket:
        found[0][bucket] += sign
        if not found[0][bucket]:
            del found[0][bucket]
    if related is not None:   # kept by bucket: status_counted moves a bucket's rows at once
        if sign > 0:
            found[1].setdefault(bucket, {})[related] = row.facts
        else:
            group = found[1].get(bucket)
            if group is not None:
                group.pop(related, None)
                if not group:
                    del found[1][bucket]
    if not found[0] and not found[1]:
        del tally[row.namespace]


def _tally_of(kind, rows):
    """The list status counters of ``rows`` (namespace -> (Counter, {key: facts})), or None
    when a row has no facts."""
    tally = {}
    for row in rows:
        if row.facts is None:
            return None
        _count(kind, tally, row, 1)
    return tally


def _relist_plan(kind, live, rows, builders, specs, counting):
    """A re-list's plan, made in the executor: ([(old, new)] the changes from ``live``, None)
    when they are few enough to apply as events, else (None, the whole new state: (rows dict,
    names, buckets, a SortedIndex per spec of ``specs``, the status counters when
    ``counting``)). ``live`` is only read with single dict operations (get, a copy of its
    items), each whole under the GIL; the caller checks the store did not change meanwhile."""
    if live:   # a first sync has nothing to compare with: built whole
        changes = _relist_changes(live, rows)
        if len(changes) <= SMALL_RELIST or len(changes) <= len(live) * SMALL_SHARE:
            return changes, None
        del changes
    fresh = {(row.namespace, row.name): row for row in rows}
    names, buckets = _state_of(fresh, builders)
    sorted_indexes = [SortedIndex(spec, fresh.values(), kind.properties) for spec in specs]
    counters = _tally_of(kind, fresh.values()) if counting else None
    return None, (fresh, names, buckets, sorted_indexes, counters)


def _relist_changes(live, rows):
    """[(old, new)] taking ``live`` (a rows dict) to ``rows`` (a full LIST's, no key twice),
    old None for an addition, new None for a deletion. No dict of the LIST's rows is made
    unless some live object is gone from it (at 150,000 pods, ~14 MiB at a re-list's peak)."""
    get = live.get
    changes = []
    found = 0
    for row in rows:
        old = get((row.namespace, row.name))
        if old is not None:
            found += 1
        if old is not row:
            changes.append((old, row))
    if found < len(live):
        listed = {(row.namespace, row.name) for row in rows}
        changes += [(row, None) for key, row in list(live.items()) if key not in listed]
    return changes


def _sorted_index(spec, props, rows):
    return SortedIndex(spec, rows, props)


def _drop(previous):
    """Frees a previous state in the executor: its rows dict (only the store had it) one item
    at a time, the rest first, at once (buckets and sorted indexes may be in a reader's hands:
    never emptied, only let go). Freeing 150,000 rows in one call would hold the GIL, and so
    the event loop, throughout; one at a time, the loop gets it back every switch interval."""
    rows = previous.pop(0)
    previous.clear()
    while rows:
        rows.popitem()


def freeze_heap():
    """After a full LIST is in (first sync or re-list), move everything alive into the garbage
    collector's permanent generation: the stores are long-lived, and a full collection would
    otherwise walk every one of their objects (seconds at 150,000 pods, on the event loop).

    No unfreeze around re-lists: rows are acyclic (dicts, lists, strings and slotted Rows),
    so the rows a re-list replaces are freed by reference counting, frozen or not; unfreezing
    would only make the next full collection walk the whole heap again. Objects made later
    (watch events, requests) are collected as usual until the next freeze."""
    gc.freeze()
