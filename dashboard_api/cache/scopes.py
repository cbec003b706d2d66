"""A store's rows or objects in one scope (namespaces), as the readers of a store take them:
``Scoped``, a list made once per change and shared; ``ScopeRead``, a related read that makes
that list only when something iterates it. Each says which version of its store it is
(``view_key``) and, through ``stamp()``, what that version is made of without holding the
objects (``Stamp``: a list's validator compares it later, lists/validators.py)."""

import asyncio

from dashboard_api.cache.indexes import Lookup


class Scoped(list):
    """The rows (or objects) of one store in one scope, as a list that also says which version
    of the store it is (``view_key``, for cache.memo.Memo) and brings the store's indexes
    (``lookup``, for summaries.related.Related), limited to the scope's namespaces."""

    def __init__(self, items, store, namespaces, objects=False):
        super().__init__(items)
        self.view_key = (id(store), store.version(namespaces), namespaces)
        self._store = store
        self._namespaces = frozenset(namespaces) if namespaces else None
        self._objects = objects

    def lookup(self, index):
        return Lookup(self._store.indexes[index], self._namespaces)

    def stamp(self):
        return Stamp(self._store, self.view_key[2])


class Stamp:
    """A store in a scope, without its rows: ``key()`` is the ``view_key`` a read of them made
    now would have."""

    __slots__ = ("store", "namespaces")

    def __init__(self, store, namespaces):
        self.store = store
        self.namespaces = namespaces

    def key(self):
        return (id(self.store), self.store.version(self.namespaces), self.namespaces)


class ScopeRead:
    """The objects of one store in one scope as a related read (summaries/related.py Related)
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

    def stamp(self):
        return Stamp(self._store, self._namespaces)

    def joined(self, name, *others):
        """The store's join ``name`` (cache/joined.py, kept per event, all namespaces) when
        ``others`` are related reads of the stores it reads, in order, else None (then the
        caller meets them itself)."""
        found = self._store.joins.get(name)
        if found is None or len(others) != len(found[1]) or not all(
                isinstance(other, ScopeRead) and other._store is store
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
        return self._store.count(self._namespaces)

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

