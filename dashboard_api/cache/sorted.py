"""Sorted indexes of a store's rows, kept per event (issue #19, item 4).

A ``SortedIndex`` holds a store's rows in the order of one sort spec (``((property, ascending),
...)``, already cut at the first unknown property as query.rows.sort_rows does), ties broken by
``(namespace + "/", name)``: the API server's list order, so a page read off the index is the
page query.rows' stable sort of the store's scope gives. Descending keys compare reversed
(integers negated, strings wrapped) while the tie part stays ascending, as a stable sort with
``reverse=True`` keeps equal rows in their original order.

Each event is one removal and one insertion, O(log n); a page is an ``islice``, O(log n + page).
Each namespace also has its own sub-index, for pages of namespace-scoped lists. Only the event
loop changes an index; readers run on the event loop too.
"""

import heapq
import itertools

from sortedcontainers import SortedKeyList

from dashboard_api.query import properties, rows as query_rows


class Desc:
    """A string sort value compared in reverse (descending)."""

    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __gt__(self, other):
        return self.v < other.v

    def __le__(self, other):
        return other.v <= self.v

    def __ge__(self, other):
        return self.v <= other.v

    def __eq__(self, other):
        return self.v == other.v

    def __ne__(self, other):
        return self.v != other.v

    __hash__ = None


def _neg(value):
    return Desc(value) if isinstance(value, str) else -value


_SLASHED = {}   # namespace -> namespace + "/", one string shared by every key


def slashed(namespace):
    found = _SLASHED.get(namespace)
    if found is None:
        found = _SLASHED.setdefault(namespace, namespace + "/")
    return found


def key_function(spec, props):
    """The index key of a row for ``spec`` (of properties of ``props``): its sort values, then
    namespace + "/" and name."""
    if not spec:
        return lambda row: (slashed(row.namespace), row.name)
    if len(spec) == 1:
        (prop, ascending), = spec
        at = properties.position(props, prop) + 1   # the sort value
        if ascending:
            return lambda row: (row.keys[at], slashed(row.namespace), row.name)
        return lambda row: (_neg(row.keys[at]), slashed(row.namespace), row.name)
    parts = tuple((properties.position(props, p) + 1, a) for p, a in spec)

    def key(row):
        keys = row.keys
        return tuple(keys[p] if a else _neg(keys[p]) for p, a in parts) + (
            slashed(row.namespace), row.name)
    return key


class _Shared:
    """An index's key function that gives the key already made for a row, while it is in
    ``known`` ({id(row): key}): the index of all rows and the row's namespace's sub-index then
    hold one key object per row, not two (at 150,000 pods, ~10 MiB an index); a row not in
    ``known`` gets a key made afresh, as by the plain key function."""

    __slots__ = ("key", "known")

    def __init__(self, key):
        self.key = key
        self.known = {}

    def __call__(self, row):
        found = self.known.get(id(row))
        return found if found is not None else self.key(row)


class SortedIndex:
    def __init__(self, spec, rows, props):
        self.spec = tuple(spec)
        self.key = key_function(self.spec, props)
        self.shared = shared = _Shared(self.key)
        rows = list(rows)
        # Each row's key made once, for both lists (and the sort), let go of once they are built.
        shared.known = {id(row): self.key(row) for row in rows}
        self.all = SortedKeyList(rows, key=shared)
        groups = {}
        for row in self.all:  # already in order: each sub-index is built from sorted input
            groups.setdefault(row.namespace, []).append(row)
        self.by_namespace = {ns: SortedKeyList(group, key=shared)
                             for ns, group in groups.items()}
        shared.known = {}

    def __len__(self):
        return len(self.all)

    def change(self, old, new):
        """One event: ``old`` (None: an addition) becomes ``new`` (None: a deletion)."""
        if old is not None:
            self.all.remove(old)
            sub = self.by_namespace.get(old.namespace)
            if sub is not None:
                sub.remove(old)
                if not sub:
                    del self.by_namespace[old.namespace]
        if new is not None:
            known = self.shared.known
            known[id(new)] = self.key(new)   # one key for both lists
            try:
                self.all.add(new)
                sub = self.by_namespace.get(new.namespace)
                if sub is None:
                    sub = self.by_namespace[new.namespace] = SortedKeyList(key=self.shared)
                sub.add(new)
            finally:
                known.pop(id(new), None)

    def count(self, namespaces):
        if not namespaces:
            return len(self.all)
        return sum(len(self.by_namespace.get(ns, ())) for ns in set(namespaces))

    def page(self, namespaces, start, stop):
        """The rows ``start:stop`` (stop None: to the end) of the namespaces (empty: all), in
        index order; ``namespaces`` must be in the store's namespace order."""
        if not namespaces:
            return list(self.all.islice(start, stop))
        subs = [self.by_namespace[ns] for ns in dict.fromkeys(namespaces)
                if ns in self.by_namespace]
        if not subs:
            return []
        if len(subs) == 1:
            return list(subs[0].islice(start, stop))
        merged = heapq.merge(*subs, key=self.key)
        return list(itertools.islice(merged, start, stop))

    def rows(self, namespaces=()):
        return self.page(namespaces, 0, None)


class ListOrder:
    """The index of no sort: the API server's own list order, (namespace + "/", name), read
    off what the store keeps per event anyway (``names``: namespace -> its sorted names).
    Nothing is built and nothing more is kept, so the first page of a list in that order costs
    what every later one does, O(namespaces + page); a SortedIndex of it would be a sort of the
    whole store first (a second at 200,000 events) and an index more to keep. Only the event
    loop reads it: a walk of every row in the executor (a broad filter) needs a SortedIndex."""

    __slots__ = ("store",)

    def __init__(self, store):
        self.store = store

    def count(self, namespaces):
        names = self.store.names
        if not namespaces:
            return len(self.store.rows)
        return sum(len(names.get(ns, ())) for ns in set(namespaces))

    def page(self, namespaces, start, stop):
        """The rows ``start:stop`` (stop None: to the end) of the namespaces (empty: all), in
        list order."""
        store = self.store
        names, rows = store.names, store.rows
        order = store.namespace_order() if not namespaces else \
            sorted(dict.fromkeys(namespaces), key=slashed)
        want = None if stop is None else max(0, stop - start)
        found = []
        for ns in order:
            if want is not None and len(found) >= want:
                break
            listed = names.get(ns, ())
            if start >= len(listed):
                start -= len(listed)
                continue
            end = None if want is None else start + want - len(found)
            found += [rows[(ns, name)] for name in listed[start:end]]
            start = 0
        return found

    def rows(self, namespaces=()):
        return self.page(namespaces, 0, None)


class FilteredIndex(SortedIndex):
    """A SortedIndex of only the rows that pass a query's filters, kept per event like the
    others: a filtered page then costs O(log m + page) for m matches instead of a walk of the
    whole store on every change. Built by ``filtered_index``, which declines broad filters."""

    def __init__(self, spec, filters, props, rows):
        self.filters = tuple(filters)
        self.props = props
        super().__init__(spec, rows, props)

    def passes(self, row):
        return bool(query_rows.filter_rows((row,), self.filters, self.props))

    def change(self, old, new):
        super().change(old if old is not None and self.passes(old) else None,
                       new if new is not None and self.passes(new) else None)


def filtered_index(spec, filters, props, rows, broad):
    """The FilteredIndex of ``rows`` for the filters, or None when more than 1/``broad`` of
    them pass: a broad filter's walk costs a few times its matches anyway, and not keeping it
    bounds what each filtered index holds."""
    rows = list(rows)
    matches = query_rows.filter_rows(rows, filters, props)
    if len(matches) * broad > len(rows):
        return None
    return FilteredIndex(spec, filters, props, matches)
