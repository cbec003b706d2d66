"""A store's sorted and filtered indexes, kept per event (issue #19, item 4).

A page of a large store is read off an index of its sort, O(log n + page), rather than a sort of
the whole store per request: ``Orders`` keeps, per store, the SortedIndex of each sort asked for
(the least recently used dropped) and the FilteredIndex of each narrow filter; each event moves
one row in each of them. A large store's index is built in the executor over a copy of the rows,
with the events that arrived meanwhile applied to it afterwards, so the event loop never sorts
the whole store. No sort is the store's own order (ListOrder): nothing to build; nor is a sort by
namespace alone (the same walk, the namespaces in another order).

Ready means ready (issue #41): the sorts of ``warm`` (the web UI's first page: newest first)
are built with a large store's rows, in the executor, before the store says it has synced
(``wanted``, read by the store's re-list); the other sorts the web UI offers (``later``) are
built right after the first sync, one at a time in the background (``build_later``); any sort
of a large store asked for before its index is there is answered by a partial selection
(cache/view.py) while the index is built (``build_soon``), so no request waits for a whole
sort. A sort by a property whose values are few needs no index for most pages: a large store
keeps their counts (``counts``, made with its rows) and reads such a page off its list order
(``category``, cache/categories.py).

Only the store (cache/store.py) tells it of events and full LISTs; only the store's view
(cache/view.py) asks it for an index.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import time
from typing import Any, Iterable

from dashboard_api.cache import interim as interim_module
from dashboard_api.cache.categories import CategoryOrder, Counts
from dashboard_api.cache.foreground import FOREGROUND
from dashboard_api.cache.sorted import (FilteredIndex, ListOrder, MirrorOrder, SortedIndex,
                                        filtered_index, mirror_of)
from dashboard_api.query.properties import COMMON, position

# Sorted indexes kept per store (one per sort spec asked for), the least recently used dropped:
# about 2.6 MiB each at 150,000 pods (cache/rowlist.py: the rows without their keys; it was ~25
# MiB with them, and 4 were kept): every column the web UI sorts by, both ways, for pods.
SORTED_INDEXES = 8
# Stores of this many rows or more build a sorted index in the executor (``ensure``).
OFF_LOOP_BUILD = 5000
# Filtered indexes kept per store (one per filters and sort spec asked for), the least recently
# used dropped; each holds at most 1/FILTER_BROAD of the rows: a filter matching more is
# answered by a walk of the sorted index, which then costs at most FILTER_BROAD x its matches.
FILTERED_INDEXES = 8
FILTER_BROAD = 4
# First rows of sorts being built kept per event (cache/interim.py), the least recently made
# dropped: each holds a page and DEPTH rows, and the events since it was made.
INTERIMS = 8
# Builds in the executor that a full LIST overtook, before the build gives up.
BUILD_TRIES = 3
# Seconds a build a page asked for (``build_soon``) waits before it starts, so that this page
# is written first. Started at once, the build's copy of the rows (on the loop) and its first
# steps (in the executor) shared the interpreter's lock with that page's last steps: ~60 ms of
# a 190 ms first click on an event's Reason at 200,000 events (issue #41).
SOON_DELAY = 0.05
# An index no page has read for this long is let go of (but a ``warm`` one): each event moves a
# row in every index kept, so an index kept for nothing costs every event (issue #41).
INDEX_IDLE = 600.0
EXPIRE_EVERY = 4096   # changes between two looks for idle indexes

log = logging.getLogger("dashboard_api.cache")
# ``filtered_ready``'s answer for a filter found broad (walk the sorted index instead).
BROAD = object()


class Orders:
    """The sorted and filtered indexes of ``store``'s rows."""

    def __init__(self, store: Any, clock: Any = time.monotonic, foreground: Any = FOREGROUND):
        self.store = store
        self.clock = clock
        self.foreground = foreground   # builds in the executor step aside for requests
        self.used = {}              # sorted spec or filtered key -> when a page last read it
        self.sorted = collections.OrderedDict()     # sort spec -> SortedIndex
        self.filtered = collections.OrderedDict()   # (spec, filters) -> FilteredIndex
        self.broad = collections.OrderedDict()      # (spec, filters) found broad -> changes then
        self.building = {}          # index key -> (future, events meanwhile), being built
        self.interims = collections.OrderedDict()   # (spec, filters, names) -> Interim
        self.changes = 0            # objects changed by events or re-lists (for ``broad``)
        self.warm = ()              # sort specs built with a large store's rows (``wanted``)
        self.later = ()             # sort specs built after a large store's first sync
        self.counts = {}            # a few-valued property's place in the keys -> its Counts
        self._soon = set()          # background builds under way (their tasks)
        self._later = None          # the task building the ``later`` sorts
        self._one_build = None      # an asyncio.Lock: one build at a time (_build_off_loop)

    # --- what the store tells ----------------------------------------------------------------

    def reset(self, sorted_indexes: Iterable[tuple[tuple, SortedIndex]] = (),
              counts: dict[int, Counts] | None = None) -> list:
        """A full LIST replaced the rows: indexes are rebuilt when next asked, but those of
        ``sorted_indexes`` ((spec, SortedIndex) built by the re-list in the executor); the
        values' ``counts`` are those made with the rows (``counted``), if any. Returns the
        indexes let go of (the caller frees them off the loop)."""
        dropped = [*self.sorted.values(), *self.filtered.values()]
        self.counts = dict(counts or {})
        self.sorted.clear()
        self.filtered.clear()
        self.broad.clear()
        self.interims.clear()
        self.sorted.update(sorted_indexes)
        return dropped

    def change(self, old: Any, new: Any) -> None:
        """One event: ``old`` (None: none) became ``new`` (None: deleted). O(log n) an index."""
        self.changes += 1
        if not self.changes % EXPIRE_EVERY:
            self._expire()
        for index in self.sorted.values():
            index.change(old, new)
        for counts in self.counts.values():
            counts.change(old, new)
        for index in self.filtered.values():
            index.change(old, new)
        for _future, log in self.building.values():
            log.append((old, new))
        for interim in self.interims.values():
            interim.log.append((old, new))

    @staticmethod
    def large(rows: int) -> bool:
        """Whether a store of ``rows`` rows builds its indexes in the executor."""
        return rows >= OFF_LOOP_BUILD

    def specs(self) -> list[tuple]:
        """The sort specs of the kept sorted indexes (a re-list builds them anew)."""
        return list(self.sorted)

    def wanted(self, large: bool) -> list[tuple]:
        """The sort specs a full LIST's new state is built with: the kept ones, and for a
        ``large`` store the ``warm`` ones (ready means ready: the first page of the web UI is
        read off its index from the first request on)."""
        specs = [tuple(spec) for spec in self.warm] if large else []
        specs += [spec for spec in self.specs() if spec not in specs]
        return specs[:SORTED_INDEXES]

    def counted(self) -> list[int]:
        """Where the values of each few-valued property of the kind are in a row's keys: the
        store counts them with a full LIST's rows (``Counts``; a few integers a namespace, so
        a small store does too, and has them once it grows large)."""
        props = getattr(self.store.kind, "properties", None) or {}
        return [position(props, name) + 1 for name, prop in props.items()
                if getattr(prop, "few", False)]

    # --- what the view asks ------------------------------------------------------------------

    def category(self, spec: tuple) -> CategoryOrder | None:
        """The CategoryOrder of ``spec`` when it sorts by one property whose values are
        counted, else None."""
        if len(spec) != 1:
            return None
        (prop, ascending), = spec
        props = getattr(self.store.kind, "properties", None) or {}
        if prop not in props:
            return None
        counts = self.counts.get(position(props, prop) + 1)
        return None if counts is None else CategoryOrder(self.store, counts, not ascending)

    def ready(self, spec: tuple, walked: bool = False,
              paged: bool = False) -> SortedIndex | ListOrder | MirrorOrder | None:
        """The index of ``spec`` if there is one now (no sort: the store's own order, unless
        it is to be ``walked``; for a bounded page, ``paged``, the index of its mirror read
        backwards), else None: nothing is built (``build_soon`` does)."""
        spec = tuple(spec)
        order = None if walked else self._list_order(spec)
        if order is not None:
            return order
        index = self.sorted.get(spec)
        if index is not None:
            self.sorted.move_to_end(spec)
            self.used[spec] = self.clock()
            return index
        mirror = mirror_of(spec)
        if paged and not walked and mirror in self.sorted:
            self.sorted.move_to_end(mirror)
            self.used[mirror] = self.clock()
            return MirrorOrder(self.sorted[mirror], spec, self.store.kind.properties)
        return None

    def _list_order(self, spec: tuple) -> ListOrder | None:
        """The ListOrder that is ``spec``'s order (no sort; a sort by namespace alone), if any:
        nothing to build. Never for an index to be walked in the executor."""
        if not spec:
            return ListOrder(self.store)
        if len(spec) == 1 and spec[0][0] == "namespace":
            props = getattr(self.store.kind, "properties", None) or {}
            if props.get("namespace") is COMMON["namespace"]:   # the object's own namespace
                return ListOrder(self.store, spec[0][1])
        return None

    def build_later(self, run: Any) -> None:
        """Starts building the ``later`` sorts in the background, one after the other (after
        a large store's first sync: the web UI's other columns are sorted at steady speed
        seconds after ready, not when a user first clicks one). A build a page asked for
        meanwhile waits for one of them at most. Indexes no page reads expire (``_expire``)."""
        if self.later:
            self._later = self._background(self._build_later(run))

    def later_pending(self) -> bool:
        """Whether the ``later`` sorts are still being built (readiness waits for them)."""
        return self._later is not None and not self._later.done()

    async def _build_later(self, run):
        began = time.monotonic()
        for spec in self.later:
            if spec not in self.sorted and spec not in self.building:
                await self.ensure(spec, run, walked=True)
        log.info("the %d later sorts of %s built in %.1fs", len(self.later),
                 getattr(self.store.kind, "name", "?"), time.monotonic() - began)

    def build_soon(self, spec: tuple, run: Any) -> None:
        """Starts building ``spec``'s index in the executor SOON_DELAY from now, unless it is
        built or being built then; nobody waits for it (the view answers meanwhile by a partial
        selection)."""
        spec = tuple(spec)
        if spec in self.sorted or spec in self.building:
            return
        self._background(self._soon_after(lambda: self.ensure(spec, run, walked=True)))

    def filtered_ready(self, spec: tuple, filters: tuple) -> FilteredIndex | object | None:
        """The FilteredIndex of ``filters`` sorted by ``spec`` if there is one now, BROAD when
        the filter was found broad (walk the sorted index), else None: nothing is built
        (``build_filtered_soon`` does)."""
        key = (tuple(spec), tuple(filters))
        index = self.filtered.get(key)
        if index is not None:
            self.filtered.move_to_end(key)
            self.used[key] = self.clock()
            return index
        decided = self.broad.get(key)
        if decided is not None and self.changes - decided <= len(self.store.rows) // FILTER_BROAD:
            return BROAD
        return None

    def build_filtered_soon(self, spec: tuple, filters: tuple, props: Any, run: Any) -> None:
        """As ``build_soon``, for the FilteredIndex of ``filters`` (or the finding that the
        filter is broad)."""
        key = ("filtered", tuple(spec), tuple(filters))
        if key in self.building:
            return
        self._background(self._soon_after(
            lambda: self.ensure_filtered(spec, filters, props, run)))

    async def _soon_after(self, build):
        """``build()`` SOON_DELAY from now (the page that asked for it is written first)."""
        await asyncio.sleep(SOON_DELAY)
        await build()

    def _background(self, build):
        task = asyncio.ensure_future(build)
        self._soon.add(task)
        task.add_done_callback(self._built)
        return task

    def _built(self, task):
        self._soon.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # the executor shut down (the cluster was let go): the next request asks again
            log.debug("an index of %s was not built: %s",
                      getattr(self.store.kind, "name", "?"), task.exception())

    def get(self, spec: tuple, walked: bool = False) -> SortedIndex | ListOrder:
        """The SortedIndex of the rows for ``spec`` (built here on first use, then kept per
        event; at most SORTED_INDEXES). No sort is the store's own order (ListOrder), unless
        the index is to be ``walked`` whole in the executor (cache/view.py's broad filter)."""
        spec = tuple(spec)
        order = None if walked else self._list_order(spec)
        if order is not None:
            return order
        index = self.sorted.get(spec)
        self.used[spec] = self.clock()
        if index is not None:
            self.sorted.move_to_end(spec)
            return index
        index = self.sorted[spec] = SortedIndex(spec, self.store.rows.values(),
                                                self.store.kind.properties)
        self._bound_sorted()
        return index

    async def ensure(self, spec: tuple, run: Any,
                     walked: bool = False) -> SortedIndex | ListOrder:
        """The SortedIndex of ``spec``, as ``get``; one of a large store is built by ``run``
        (the executor) first, so the event loop never sorts the whole store."""
        spec = tuple(spec)
        rows = self.store.rows
        if spec in self.sorted or len(rows) < OFF_LOOP_BUILD or \
                (not walked and self._list_order(spec) is not None):
            return self.get(spec, walked)
        index, built = await self._build_off_loop(spec, functools.partial(
            SortedIndex, spec, props=self.store.kind.properties,
            pause=self.foreground.step_aside), run, mirror_of(spec))
        if built and spec not in self.sorted:
            self.sorted[spec] = index
            self._bound_sorted()
            self._drop_interims(spec, ())
        return self.get(spec, walked)

    async def ensure_filtered(self, spec: tuple, filters: tuple, props: Any,
                              run: Any) -> FilteredIndex | None:
        """The FilteredIndex of ``filters`` sorted by ``spec``, kept per event from now on, or
        None when the filter is broad (then the caller walks the sorted index). A large
        store's is built by ``run`` (the executor)."""
        key = (tuple(spec), tuple(filters))
        index = self.filtered.get(key)
        self.used[key] = self.clock()
        if index is not None:
            self.filtered.move_to_end(key)
            return index
        rows = self.store.rows
        decided = self.broad.get(key)
        if decided is not None and self.changes - decided <= len(rows) // FILTER_BROAD:
            return None        # still broad: not enough has changed since it was found so
        make = functools.partial(filtered_index, key[0], key[1], props, broad=FILTER_BROAD)
        if len(rows) < OFF_LOOP_BUILD:
            return self._keep_filtered(key, make(rows.values()))
        index, built = await self._build_off_loop(
            ("filtered",) + key, functools.partial(make, pause=self.foreground.step_aside), run)
        if not built:          # built by another caller, or the rows kept being replaced
            return self.filtered.get(key)
        return self._keep_filtered(key, index)

    # --- building ----------------------------------------------------------------------------

    async def _build_off_loop(self, key, make, run, mirror=None):
        """(``make(rows)`` over a copy of the rows, run by ``run`` (the executor), with the
        events that arrived meanwhile applied to it (``change``), True); done again when a
        re-list swapped the rows in meanwhile, at most BUILD_TRIES times. Callers of the same
        ``key`` share one build: the others wait for it and get (None, False), as does the
        builder when every try was overtaken. A store builds one index at a time (each build
        holds a copy of the rows and its slices: several at once were ~60 MiB more at the
        peak, at 150,000 pods), the others waiting their turn. ``mirror``: the sort whose
        index, when kept, ``make`` reads backwards (``mirrored``) rather than sorting the rows."""
        building = self.building.get(key)
        if building is not None:
            await asyncio.shield(building[0])
            return None, False
        future = asyncio.get_running_loop().create_future()
        log = []
        self.building[key] = (future, log)
        if self._one_build is None:   # made on the loop that runs it (Python 3.9 binds it)
            self._one_build = asyncio.Lock()
        try:
            async with self._one_build:
                return await self._build(log, make, run, mirror)
        finally:
            del self.building[key]
            future.set_result(None)

    async def _build(self, log, make, run, mirror=None):
        """One build's tries (see ``_build_off_loop``); ``log`` collects the events meanwhile.
        What it builds from is copied on the loop, by one C call, when the log starts: the
        rows, or the index of ``mirror`` in its order when it is kept (issue #41: the web UI's
        sorts come in pairs, and a sort of 150,000 rows is ~0.3-0.8 s of the interpreter's time)."""
        store = self.store
        for _ in range(BUILD_TRIES):
            replaced = store.replaced
            del log[:]
            source = self.sorted.get(mirror) if mirror is not None else None
            if source is not None:
                made = await run(functools.partial(make, mirrored=True), list(source.all))
            else:
                made = await run(make, list(store.rows.values()))
            if store.replaced == replaced:
                if made is not None:
                    for old, new in log:
                        made.change(old, new)
                return made, True
        return None, False

    def _keep_filtered(self, key, index):
        """Keeps a built FilteredIndex, or remembers that the filter was broad (bounded)."""
        if index is None:
            self.broad[key] = self.changes
            self.broad.move_to_end(key)
            self._bound(self.broad, 64)
            return None
        self.broad.pop(key, None)
        self.filtered[key] = index
        self._bound(self.filtered, FILTERED_INDEXES)
        self._drop_interims(*key)
        return index

    # --- first rows kept while an index builds (cache/interim.py) ------------------------------

    def interim(self, key: tuple) -> Any:
        """The Interim kept for ``key`` ((spec, filters, namespaces)), if any and still young."""
        found = self.interims.get(key)
        if found is not None and not self._young(found):
            del self.interims[key]
            return None
        return found

    def keep_interim(self, key: tuple, interim: Any) -> None:
        """Keeps ``interim`` for ``key`` (made when its rows were copied: it gets every event
        from now on), at most INTERIMS, the oldest dropped first."""
        self.interims.pop(key, None)
        self.interims[key] = interim
        self._bound(self.interims, INTERIMS)

    def forget_interim(self, key: tuple, interim: Any) -> None:
        """Lets go of ``interim`` (its selection failed), unless another replaced it."""
        if self.interims.get(key) is interim:
            del self.interims[key]

    def _young(self, interim):
        return self.clock() - interim.made <= interim_module.AGE and \
            len(interim.log) <= interim_module.LOG_LIMIT

    def _drop_interims(self, spec, filters):
        """Its index is there: the interims of that sort and filter are read no more."""
        for key in [k for k in self.interims if k[0] == spec and k[1] == filters]:
            del self.interims[key]

    def _expire(self):
        """Lets go of the indexes no page read for INDEX_IDLE seconds (never a warm one); an
        index built and not read yet counts from its build."""
        now, warm = self.clock(), {tuple(spec) for spec in self.warm}
        for kept in (self.sorted, self.filtered):
            for key in list(kept):
                if key not in warm and now - self.used.setdefault(key, now) > INDEX_IDLE:
                    del kept[key]
        self.used = {key: at for key, at in self.used.items()
                     if key in self.sorted or key in self.filtered}
        for key in [k for k, interim in self.interims.items() if not self._young(interim)]:
            del self.interims[key]

    def _bound_sorted(self):
        """At most SORTED_INDEXES sorted indexes: the least recently used go first, but never
        a ``warm`` one (the web UI's first page reads it on every list)."""
        warm = {tuple(spec) for spec in self.warm}
        while len(self.sorted) > SORTED_INDEXES:
            spec = next((s for s in self.sorted if s not in warm), None)
            if spec is None:
                break
            del self.sorted[spec]

    @staticmethod
    def _bound(kept, size):
        while len(kept) > size:
            kept.popitem(last=False)

