"""The cached objects of one resource, kept in the API server's own order.

A store holds its kind's rows (cache/rows.py) by (namespace, name), each namespace's names
sorted, the join indexes its kind declares (cache/indexes.py), its sorted and filtered indexes
(cache/orders.py) and its list status counters (cache/tally.py), all kept per event. Changes
happen on the event loop only; readers elsewhere see whole rows (rows never change).

Order: the API server lists a resource in the order of its storage keys, ``namespace/name``; a
list of several named namespaces is the concatenation of their lists in the order asked. The
store keeps each namespace's names sorted and namespaces in key order, so ``scope`` gives that
order without sorting.

Staleness and re-lists (issue #19), as client-go's reflector: once a store has synced it keeps
answering while its reflector re-lists (after a 410, a failed watch, an API server restart); when
the new LIST completes, ``relist`` brings the store to it without holding the event loop: what
changed is found in the executor (cache/relists.py), then a few changes are applied as events
(in batches, pages answered in between) and many are built whole in the executor and swapped in.
The re-list's rows of unchanged objects (same uid and resourceVersion) are the live rows
themselves (``reusable``), so meanwhile the process holds one store plus what changed, not two.
``stale_since`` says since when the store is not known to be current (None while a watch is
established and streaming); ``first_sync`` is set once the store has synced, or once it is
known it will not (unavailable), for the requests that wait for it.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import time
from typing import Any, Iterable

from dashboard_api.cache import refit, relists, tally
from dashboard_api.cache.categories import Counts
from dashboard_api.cache.heap import freeze_heap
from dashboard_api.cache.indexes import index_state, make_index
from dashboard_api.cache.orders import Orders
from dashboard_api.cache.rows import bucket_key
from dashboard_api.cache.scopes import Scoped, ScopeRead
from dashboard_api.query.rows import Row, slashed

# A re-list's changes applied as events (relists.plan found them few) go this many at a time,
# the event loop free between batches.
RELIST_BATCH = 1000
RELIST_SLICE = 0.02   # seconds at most a batch holds the loop
RELIST_TRIES = 3   # executor computations the store changed under; then a plain replace

SYNCING, SYNCED, UNAVAILABLE = "syncing", "synced", "unavailable"


class Store:
    """One resource's rows; ``generation`` counts the changes applied (selections compare it);
    ``replaced`` is the generation of the last full LIST."""

    def __init__(self, kind, indexes=None, clock=time.monotonic):
        self.kind = kind
        self.state = SYNCING
        self.synced_once = False
        self.synced_at = None       # when it first synced (clock)
        self.clock = clock
        self.stale_since = clock()  # not current since then; None: current
        self._first_sync = None
        self.generation = 0
        self.resource_version = None
        self.events = 0
        self.rows = {}              # (namespace, name) -> Row
        self._rows_size = 0         # its table's bytes at its natural size (cache/refit.py)
        self.names = {}             # namespace -> sorted [name]
        self._namespace_order = None   # names' keys in list order, until one comes or goes
        self.indexes = {name: make_index(fn) for name, fn in (indexes or {}).items()}
        self.joins = {}             # name -> (a join, the stores it reads), cache/joined.py
        self.watchers = []          # as an index's, of every row (value None), cache/joined.py
        self.orders = Orders(self)  # sorted and filtered indexes, kept per event
        self._scopes = {}           # (namespaces, objects?) -> Scoped, until the next change
        self._stamps = {}           # namespace -> generation of its last change
        self.replaced = 0           # generation of the last full LIST
        self._tally = None          # namespace -> list status counters, once asked for

    def __len__(self):
        return len(self.rows)

    def count(self, namespaces: Iterable[str]) -> int:
        """How many rows the namespaces (empty: all) hold."""
        if not namespaces:
            return len(self.rows)
        names = self.names
        return sum(len(names.get(ns, ())) for ns in set(namespaces))

    # --- state -----------------------------------------------------------------------------

    def set_state(self, name: str, since: float | None = None) -> None:
        """The reflector says where it is: ``synced`` (a LIST completed, or a watch is
        established), ``syncing`` (listing, or the watch failed) or ``unavailable`` (the
        service identity may not list it). A store that has synced once goes on answering
        while it is syncing again: it is only stale, since ``since`` (a time of ``clock``:
        when a watch cut for silence last heard anything) or now."""
        if name == SYNCED:
            self.stale_since = None
            if not self.synced_once:
                self.synced_at = self.clock()
            self.synced_once = True
        elif self.stale_since is None:
            self.stale_since = self.clock() if since is None else min(since, self.clock())
        self.state = name
        if name in (SYNCED, UNAVAILABLE) and self._first_sync is not None:
            self._first_sync.set()

    def serving(self) -> bool:
        """Whether lists may be answered from this store now (stale or not)."""
        return self.state == SYNCED or (self.state == SYNCING and self.synced_once)

    def staleness(self) -> float:
        """Seconds since the store was last known current (0 while it is)."""
        if self.stale_since is None:
            return 0.0
        return max(0.0, self.clock() - self.stale_since)

    async def wait_first_sync(self, timeout: float) -> bool:
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

    def replace(self, rows: Iterable[Row], resource_version: str | None) -> None:
        """The result of a full LIST: the store holds exactly ``rows`` afterwards. On the event
        loop, O(n log n): tests and the fallback of ``relist``."""
        self.rows = {(row.namespace, row.name): row for row in rows}
        names, buckets = relists.state_of(self.rows, self._builders())
        counts = {at: Counts(at, self.rows.values()) for at in self.orders.counted()}
        self._swap(self.rows, names, buckets, (), None, counts, resource_version)

    def _builders(self):
        """{index name: state_of(rows)}: each index's state of a full LIST, made in the
        executor."""
        return {name: index.state_of for name, index in self.indexes.items()}

    def _swap(self, rows, names, buckets, sorted_indexes, counters, counts, resource_version):
        """A whole new state in, O(1) on the event loop: every selection's version changes.
        ``counts``: the values of the few-valued properties counted (cache/categories.py).
        Returns the previous state's parts, for ``relists.drop`` (freeing them holds the
        GIL)."""
        previous = [self.rows, self.names, self._tally]   # rows first
        previous += [index_state(index) for index in self.indexes.values()]
        self.rows = rows
        self._rows_size = refit.fitted(rows)
        self.names = names
        self._namespace_order = None
        for name, index in self.indexes.items():
            index.swap(buckets[name])
        for watcher in self.watchers:
            watcher.reset()
        self.resource_version = resource_version
        self._changed()
        self._stamps = {}
        self.replaced = self.generation
        previous += self.orders.reset(sorted_indexes, counts)
        self._tally = counters
        freeze_heap()
        return previous

    async def relist(self, rows: list[Row], resource_version: str | None, run: Any) -> bool:
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
            large = self.orders.large(max(len(rows), len(self.rows)))
            specs = self.orders.wanted(large)
            # A large store's list status counters are made with its rows (issue #41: ready
            # means ready), not on the event loop by the first page that asks for them.
            counting = self._tally is not None or (large and self.kind is not None
                                                   and self.kind.status_split is not None)
            changes, built = await run(
                relists.plan, self.kind, self.rows, rows, self._builders(), specs, counting,
                self.orders.foreground.step_aside_for_work, self.names,
                self.orders.counted())
            if self.generation != generation:
                continue
            if built is None:
                await self._apply_changes(changes, resource_version)
                return False
            fresh, names, buckets, sorted_indexes, counters, counts = built
            previous = self._swap(fresh, names, buckets, zip(specs, sorted_indexes), counters,
                                  counts, resource_version)
            del fresh, names, buckets, sorted_indexes, counters, counts, built
            await run(relists.drop, previous)
            if large and not self.synced_once:   # the first sync: the web UI's other sorts
                self.orders.build_later(run)
            return True
        self.replace(rows, resource_version)
        return True

    async def _apply_changes(self, changes, resource_version):
        """A re-list's (old, new) changes applied as events, the loop free between batches:
        a batch ends after RELIST_BATCH changes or RELIST_SLICE seconds, whichever comes
        first (a change costs what its indexes cost: a store with many indexes must not hold
        the loop longer for it; issue #41). Each change is let go of once applied, so the rows
        it replaced are freed batch by batch, not all at once at the end."""
        i, count = 0, len(changes)
        while i < count:
            if i:
                await asyncio.sleep(0)
            touched = set()
            ends = time.monotonic() + RELIST_SLICE
            stop = min(i + RELIST_BATCH, count)
            while i < stop:
                old, new = changes[i]
                changes[i] = None
                row = new if new is not None else old
                self._change(row.namespace, row.name, new)
                touched.add(row.namespace)
                i += 1
                if not i % 64 and time.monotonic() > ends:
                    break
            self._changed()
            for namespace in touched:
                self._stamps[namespace] = self.generation
        self.resource_version = resource_version

    # --- re-list (issue #19): no second full copy -----------------------------------------

    def reusable(self, obj: dict) -> Row | None:
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

    def neighbour(self, namespace: str, name: str) -> Row | None:
        """The row just before ``name`` in its namespace's name order (else just after), or
        None. A new object's record shares what equals its neighbour's (Cached.to_row), as a
        LIST's neighbours share through the pool: an API server lists in key order, so an
        object's events, or a replica set's pods, come together, and a watch brings each alone.
        Called in the worker: one bisection of a list the loop may change meanwhile, so a name
        read may be gone; any row does (sharing is by equal value), or none."""
        names = self.names.get(namespace)
        if not names:
            return None
        try:
            at = bisect.bisect_left(names, name)
            near = names[at - 1] if at > 0 else names[at + (names[at] == name)]
        except IndexError:
            return None
        return self.rows.get((namespace, near))

    def apply(self, kind_of_event: str, row: Row, resource_version: str | None) -> None:
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
        if old is None and new is None:
            return
        self.orders.change(old, new)
        if self._tally is not None:
            if old is not None:
                tally.count(self.kind, self._tally, old, -1)
            if new is not None:
                tally.count(self.kind, self._tally, new, 1)

    def _put(self, row):
        key = (row.namespace, row.name)
        old = self.rows.get(key)
        bucket = bucket_key(row)
        indexes = self.indexes.values()
        if old is not None:   # the indexes that cannot take it in old's place: out, then in
            indexes = [index for index in indexes if not index.replace(old, row, bucket)]
            for index in indexes:
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
        if old is None:   # a new key: the table may have grown (objects come and go)
            self.rows, self._rows_size = refit.refit(self.rows, self._rows_size)
        for index in indexes:
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

    def version(self, namespaces: tuple[str, ...]) -> int | tuple[int, ...]:
        """What a selection over ``namespaces`` (empty: all) depends on: a change in another
        namespace leaves the version of a namespace's selections as it was."""
        if not namespaces:
            return self.generation
        return tuple(max(self._stamps.get(ns, 0), self.replaced) for ns in namespaces)

    # --- reads -----------------------------------------------------------------------------

    def scope(self, namespaces: tuple[str, ...], objects: bool = False) -> Scoped:
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

    def namespace_order(self) -> list[str]:
        """The namespaces holding rows, in the API server's list order (by namespace + "/")."""
        if self._namespace_order is None:
            self._namespace_order = sorted(self.names, key=slashed)
        return self._namespace_order
    # --- list status counters (issue #19, item 4) ------------------------------------------

    def status_tally(self, namespaces: tuple[str, ...]) -> tuple[Any, dict] | None:
        """(buckets counted from the rows' facts alone, {namespace: {bucket: {key: facts}}} of
        the rows whose bucket ``rel`` may change, by that bucket) over the namespaces
        (empty: all), for the kind's ``status_counted``; None when the kind has no
        ``status_split``. Counters are kept per event once first asked for."""
        kind = self.kind
        if kind is None or kind.status_split is None:
            return None
        if self._tally is None:
            self._tally = tally.tally_of(kind, self.rows.values())
            if self._tally is None:
                return None
        counts = collections.Counter()
        pending = {}
        for ns in (set(namespaces) if namespaces else list(self._tally)):
            found = self._tally.get(ns)
            if found is not None:
                counts.update(found[0])
                if found[1]:
                    pending[ns] = found[1]
        return counts, pending

    def related(self, namespaces: tuple[str, ...]) -> ScopeRead:
        """The objects of the namespaces as a related read: unread until iterated."""
        return ScopeRead(self, namespaces)
