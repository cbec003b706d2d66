"""Sorted indexes of a store's rows, kept per event (issue #19, item 4).

A ``SortedIndex`` holds a store's rows in the order of one sort spec (``((property, ascending),
...)``, already cut at the first unknown property as query.rows.sort_rows does), ties broken by
``(namespace + "/", name)``: the API server's list order, so a page read off the index is the
page query.rows' stable sort of the store's scope gives. Descending keys compare reversed
(integers negated, strings' bytes flipped) while the tie part stays ascending, as a stable sort with
``reverse=True`` keeps equal rows in their original order.

Each event is one removal and one insertion, O(log n) key comparisons (a key is made for each,
the index keeps none: cache/rowlist.py); a page is an ``islice``, O(n / 1000 + page).
Each namespace also has its own sub-index, for pages of namespace-scoped lists. Only the event
loop changes an index; readers run on the event loop too.
"""

import collections
import heapq
import itertools
import operator

from dashboard_api.cache.rowlist import RowList
from dashboard_api.query import properties, rows as query_rows
from dashboard_api.query.rows import slashed

# A string sort value descending: its UTF-8 bytes each flipped (255 - b), then a byte above every
# flipped one, so that a prefix comes after the longer strings it starts (as "ab" comes after
# "abc" in descending order); bytes compare in C (a wrapper class with __lt__ made every
# comparison a Python call, ~30% of a watch event's cost with a few indexes; issue #41).
_FLIP = bytes(255 - b for b in range(256))


def _neg(value):
    """A sort value compared in reverse: integers negated, strings flipped (``_FLIP``)."""
    return value.encode().translate(_FLIP) + b"\xff" if isinstance(value, str) else -value


def key_function(spec, props):
    """The index key of a row for ``spec`` (of properties of ``props``): its sort values, then
    its place in list order ((namespace + "/", name): unique, so keys never tie). Made again
    whenever a RowList needs it (cache/rowlist.py): a tuple of two, nothing else allocated but
    a descending string's bytes."""
    if not spec:
        return lambda row: row.place
    if len(spec) == 1:
        (prop, ascending), = spec
        at = properties.position(props, prop) + 1   # the sort value
        if ascending:
            return lambda row: (row.keys[at], row.place)
        return lambda row: (_neg(row.keys[at]), row.place)
    parts = tuple((properties.position(props, p) + 1, a) for p, a in spec)
    if len(parts) == 2:   # a tuple made in one expression: a third of the generic key's cost
        (first, up), (second, up2) = parts
        if up and up2:
            return lambda row: (row.keys[first], row.keys[second], row.place)
        if up:
            return lambda row: (row.keys[first], _neg(row.keys[second]), row.place)
        if up2:
            return lambda row: (_neg(row.keys[first]), row.keys[second], row.place)
        return lambda row: (_neg(row.keys[first]), _neg(row.keys[second]), row.place)

    def key(row):
        keys = row.keys
        return tuple(keys[p] if a else _neg(keys[p]) for p, a in parts) + (row.place,)
    return key


def single_value(spec, props):
    """(where the sort value is in a row's keys, descending) when ``spec`` sorts by one
    property, else None: RowList then compares the values themselves (cache/rowlist.py)."""
    if len(spec) != 1:
        return None
    (prop, ascending), = spec
    return properties.position(props, prop) + 1, not ascending


# Rows sorted by one C call at a time when an index is built (``sliced_sort``): a sort of n rows
# holds the GIL, and so the event loop, for all of its n log n comparisons (~0.2 s at 200,000
# events); slices of this many take a few ms each (16,384 took ~20 ms with many equal values,
# and the whole build was a third slower), and their merge runs as Python code, which gives
# the GIL back every switch interval (issue #41).
SORT_SLICE = 4096


def sliced_sort(rows, key, pause=None):
    """``rows`` (a list) sorted by ``key``, by slices of SORT_SLICE sorted one at a time and
    then merged (``_merged``): the same order as ``sorted(rows, key=key)`` when keys are unique
    (every index key ends with namespace and name), without holding the GIL for more than a
    slice. ``pause``, when given, is called between two steps (a slice, SORT_SLICE rows of the
    merge): a background build steps aside there for requests (cache/foreground.py)."""
    if len(rows) <= SORT_SLICE:
        return sorted(rows, key=key)
    # The keys a slice's sort makes are let go of with it; the merge makes each row's key once
    # more, as it takes it: no key of every row is ever held at once (~20 MiB at 150,000 pods).
    slices = []
    for at in range(0, len(rows), SORT_SLICE):
        if pause is not None:
            pause()
        slices.append(sorted(rows[at:at + SORT_SLICE], key=key))
    return _merged(slices, key, pause)


def _merged(runs, key, pause=None):
    """The rows of ``runs`` (lists, each sorted by ``key``, keys unique) in one sorted list,
    merged a round at a time by C calls. A round takes from each run at most its next ``step``
    rows (SORT_SLICE rows in all): the rows up to the least key any run's block ends on (every
    row at or below it is in those blocks), found by a bisection, and sorts them together, which
    for runs already sorted is a merge in C. The run whose block ends on that key gives its
    whole block, so each round takes ``step`` rows at least; a run's first and last keys are
    made again only when it moved, so a round in which one run alone gives rows (runs of
    disjoint ranges: slices of rows in list order sorted by name) costs one bisection.

    ``heapq.merge`` did the same with Python code per row: a third of an index's build, and
    the build a tenth of start-up's CPU (issue #41: this merge takes ~30-50% less CPU and
    holds the GIL no longer than a slice's sort)."""
    runs = [run for run in runs if run]
    step = max(1, SORT_SLICE // max(1, len(runs)))
    at = [0] * len(runs)
    heads = [key(run[0]) for run in runs]
    ends = [key(run[min(len(run), step) - 1]) for run in runs]
    live = list(range(len(runs)))
    out = []
    paused = 0
    while live:
        if pause is not None and len(out) - paused >= SORT_SLICE:
            pause()
            paused = len(out)
        bound = min(map(ends.__getitem__, live))
        chunk = []
        still = []
        for k in live:
            if heads[k] <= bound:
                run, start = runs[k], at[k]
                stop = min(len(run), start + step)
                if ends[k] != bound:
                    stop = _bisect_right(run, bound, start + 1, stop, key)
                chunk += run[start:stop]
                at[k] = stop
                if stop == len(run):
                    continue   # this run is done
                heads[k] = key(run[stop])
                ends[k] = key(run[min(len(run), stop + step) - 1])
            still.append(k)
        live = still
        chunk.sort(key=key)
        out += chunk
    return out


def _bisect_right(rows, bound, lo, hi, key):
    """``bisect.bisect_right(rows, bound, lo, hi, key=key)``, which Python 3.9 lacks."""
    while lo < hi:
        mid = (lo + hi) // 2
        if bound < key(rows[mid]):
            hi = mid
        else:
            lo = mid + 1
    return lo


def mirror_of(spec):
    """The sort whose index, read backwards, gives ``spec``'s (``mirror_order``): the same single
    property the other way round; None for a sort of several properties."""
    if len(spec) != 1:
        return None
    (prop, ascending), = spec
    return ((prop, not ascending),)


def mirror_order(ordered, at, pause=None):
    """Rows in the order of one sort value (at ``at`` in their keys) the other way round, from
    ``ordered``, a list of them in its mirror's order (``mirror_of``): read backwards, and each
    run of equal values turned back, since ties stay in list order (by place) both ways. O(n),
    the values read and their ties found by C calls, where a sort of 150,000 rows is ~0.3-0.8 s
    of the interpreter's time (issue #41: half the web UI's first sorts are the mirror of
    another). ``pause`` as for ``sliced_sort``, every SORT_SLICE rows."""
    rows = ordered[::-1]
    first = last = None
    for i in itertools.chain(_ties(rows, at, pause), (None,)):
        if last is not None and i != last + 1:   # the run first..last + 1 ended
            rows[first:last + 2] = rows[first:last + 2][::-1]
            first = None
        if first is None:
            first = i
        last = i
    return rows


def _ties(rows, at, pause):
    """Each i where ``rows[i]`` and ``rows[i + 1]`` have equal values at ``at``, read by
    SORT_SLICE rows at a time (a C call over all of them held the GIL ~100 ms at 200,000 rows).
    Turning a run of ties back changes no value: reading on after one is reading the same."""
    value = operator.itemgetter(at)
    keys = operator.attrgetter("keys")
    for start in range(0, len(rows) - 1, SORT_SLICE):
        if pause is not None:
            pause()
        values = list(map(value, map(keys, rows[start:start + SORT_SLICE + 1])))
        yield from itertools.compress(itertools.count(start), map(
            operator.eq, values, itertools.islice(values, 1, None)))


# A sort value taking at most this many distinct values among a sample of SORT_SLICE rows is
# taken for a category (a status, an event's reason or type): ``first_of_few`` picks the
# first rows of its sort by counting values rather than by a heap of every row's key.
FEW_VALUES = 64


def first_of_few(rows, spec, props, count):
    """The first ``count`` of ``rows`` in the order of ``spec`` (as ``heapq.nsmallest(count,
    rows, key=key_function(spec, props))``) when ``spec`` sorts by one property whose values
    are few and of one type; else None (the caller takes the heap). Issue #41: a category's
    first sort is a partial selection of the whole store, and the heap made every row's key in
    Python. Here the values are read by C calls over SORT_SLICE rows at a time and counted by
    one, which gives the bound value (the last the first ``count`` rows reach); the rows
    before it and those at it are found by ``list.index``'s C scans, and only those at it go
    through a heap, by their place, which a C call reads."""
    single = single_value(spec, props)
    if single is None or not 0 < count < len(rows):
        return None
    at, descending = single
    value, keys = operator.itemgetter(at), operator.attrgetter("keys")
    if len(set(map(value, map(keys, rows[:SORT_SLICE])))) > FEW_VALUES:
        return None
    values = []
    for start in range(0, len(rows), SORT_SLICE):
        values += map(value, map(keys, rows[start:start + SORT_SLICE]))
    counts = collections.Counter(values)
    kind = type(next(iter(counts)))
    if len(counts) > 4 * FEW_VALUES or kind not in (str, int) or \
            any(type(v) is not kind for v in counts):
        return None   # many after all, or of mixed types: not a category
    before = []
    for bound in sorted(counts, reverse=descending):
        if len(before) + counts[bound] >= count:
            break
        before += map(rows.__getitem__, _positions(values, bound))
    first = sorted(before, key=key_function(spec, props))
    tied = map(rows.__getitem__, _positions(values, bound))
    return first + heapq.nsmallest(count - len(first), tied, key=operator.attrgetter("place"))


def rows_of(rows, at, values):
    """The rows whose sort value (at ``at`` in their keys) is one of ``values`` (a set), in
    their order, read by C calls over SORT_SLICE rows at a time."""
    value, keys, found = operator.itemgetter(at), operator.attrgetter("keys"), []
    for start in range(0, len(rows), SORT_SLICE):
        part = rows[start:start + SORT_SLICE]
        found += itertools.compress(part, map(values.__contains__, map(value, map(keys, part))))
    return found


def _positions(values, value):
    """Each i where ``values[i] == value``: one C scan of ``list.index`` per occurrence."""
    found, at, index = [], -1, values.index
    try:
        while True:
            at = index(value, at + 1)
            found.append(at)
    except ValueError:
        return found


class SortedIndex:
    """A store's rows in the order of one sort spec (see the module docstring), with one
    sub-index per namespace, each a RowList (cache/rowlist.py: the rows without their keys,
    16 bytes a row for both). Built in the executor for a large store (cache/orders.py): the
    rows are sorted by slices, so the build never holds the GIL long (``sliced_sort``), and a
    build in the background steps aside for requests between them (``pause``). ``mirrored``:
    ``rows`` are another index's, in the order of ``mirror_of(spec)``, read backwards
    (``mirror_order``) rather than sorted."""

    def __init__(self, spec, rows, props, pause=None, mirrored=False):
        self.spec = tuple(spec)
        self.key = key_function(self.spec, props)
        self.single = single_value(self.spec, props)
        if mirrored:
            ordered = mirror_order(list(rows), self.single[0], pause)
        else:
            ordered = sliced_sort(list(rows), self.key, pause)
        self.all = RowList(self.key, ordered, self.single)
        groups = {}
        for at in range(0, len(ordered), SORT_SLICE):   # in order: sorted input for each
            if pause is not None:
                pause()
            for row in ordered[at:at + SORT_SLICE]:
                groups.setdefault(row.namespace, []).append(row)
        del ordered
        self.by_namespace = {ns: RowList(self.key, group, self.single)
                             for ns, group in groups.items()}

    def __len__(self):
        return len(self.all)

    def change(self, old, new):
        """One event: ``old`` (None: an addition) becomes ``new`` (None: a deletion)."""
        if old is not None and new is not None and old.namespace == new.namespace and \
                self.all.replace(old, new):   # its place unchanged: the same in its namespace
            self.by_namespace[old.namespace].replace(old, new)
            return
        if old is not None:
            self.all.remove(old)
            sub = self.by_namespace.get(old.namespace)
            if sub is not None:
                sub.remove(old)
                if not sub:
                    del self.by_namespace[old.namespace]
        if new is not None:
            self.all.add(new)
            sub = self.by_namespace.get(new.namespace)
            if sub is None:
                sub = self.by_namespace[new.namespace] = RowList(self.key, single=self.single)
            sub.add(new)

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


class MirrorOrder:
    """The pages of a sort by one property read off the SortedIndex of its mirror
    (``mirror_of``: the other way round) backwards, nothing built (issue #41: the web UI's
    columns sort both ways, and each index kept costs every event a bisection and ~2.6 MiB at
    150,000 pods). The mirror's runs of one value come last first, each in the index's own
    order, since ties stay in list order both ways: a page costs two bisections for each run
    it touches (``RowList.rank``), a name's run being one row or a few, a category's
    thousands."""

    __slots__ = ("index", "key", "at")

    def __init__(self, index, spec, props):
        self.index = index
        self.key = key_function(spec, props)   # this order's, to merge namespaces
        self.at = index.single[0]

    def __len__(self):
        return len(self.index)

    def count(self, namespaces):
        return self.index.count(namespaces)

    def page(self, namespaces, start, stop):
        """As ``SortedIndex.page``. A whole read (``stop`` None) turns the index's rows back
        at once (``mirror_order``): O(n), which its callers keep off the event loop."""
        index = self.index
        if stop is None:
            return mirror_order(index.page(namespaces, 0, None), self.at)[start:]
        if not namespaces:
            return _backwards(index.all, start, stop, self.at)
        subs = [index.by_namespace[ns] for ns in dict.fromkeys(namespaces)
                if ns in index.by_namespace]
        if not subs:
            return []
        if len(subs) == 1:
            return _backwards(subs[0], start, stop, self.at)
        merged = heapq.merge(*map(_runs_backwards, subs), key=self.key)
        return list(itertools.islice(merged, start, stop))

    def rows(self, namespaces=()):
        return self.page(namespaces, 0, None)


# Rows beyond twice a page's that ``_backwards`` turns back at once rather than run by run.
SHORT_RUNS = 64


def _run_at(rows, q):
    """(start, end) of the run of rows of one sort value holding position ``q``."""
    first = rows.key(rows.islice(q, q + 1)[0])[0]
    return rows.rank(first), rows.rank(first, right=True)


def _backwards(rows, start, stop, at):
    """The rows ``start:stop`` of a RowList's runs read last first (``MirrorOrder``). Where
    the runs the page touches are short (a name's), the rows they span are turned back at once
    (``mirror_order``: C calls, two bisections in all); else run by run, from the run holding
    the page's first row, found from its end, then the runs before it."""
    n = len(rows)
    stop = min(stop, n)
    if start >= stop:
        return []
    lo, _end = _run_at(rows, n - stop)        # the span the page reads, whole runs
    _begin, hi = _run_at(rows, n - 1 - start)
    if hi - lo <= 2 * (stop - start) + SHORT_RUNS:
        return mirror_order(rows.islice(lo, hi), at)[start - (n - hi):stop - (n - hi)]
    found = []
    while start < stop:
        lo, hi = _run_at(rows, n - 1 - start)   # a run at [lo, hi) is read at [n - hi, n - lo)
        begin = lo + start - (n - hi)
        end = min(hi, begin + stop - start)
        found += rows.islice(begin, end)
        start += end - begin
    return found


def _runs_backwards(rows):
    """Every row of a RowList, its runs last first (to merge namespaces' pages)."""
    end = len(rows)
    while end > 0:
        lo, _hi = _run_at(rows, end - 1)
        yield from rows.islice(lo, end)
        end = lo


class ListOrder:
    """The index of no sort: the API server's own list order, (namespace + "/", name), read
    off what the store keeps per event anyway (``names``: namespace -> its sorted names).
    Nothing is built and nothing more is kept, so the first page of a list in that order costs
    what every later one does, O(namespaces + page); a SortedIndex of it would be a sort of the
    whole store first (a second at 200,000 events) and an index more to keep. Only the event
    loop reads it: a walk of every row in the executor (a broad filter) needs a SortedIndex.

    A sort by namespace alone (``namespaces_ascending`` True or False) is the same walk with
    the namespaces in the order of their names (a SortedIndex of it orders by the namespace,
    then by (namespace + "/", name): in each namespace, by name), so it is read here too: the
    web UI's namespace column costs no index (issue #41: each first click on it was a partial
    selection of the whole store, ~200 ms at 150,000 pods, until its index was built)."""

    __slots__ = ("store", "namespaces_ascending")

    def __init__(self, store, namespaces_ascending=None):
        self.store = store
        self.namespaces_ascending = namespaces_ascending

    def count(self, namespaces):
        names = self.store.names
        if not namespaces:
            return len(self.store.rows)
        return sum(len(names.get(ns, ())) for ns in set(namespaces))

    def page(self, namespaces, start, stop):
        """The rows ``start:stop`` (stop None: to the end) of the namespaces (empty: all), in
        list order (or by namespace)."""
        store = self.store
        names, rows = store.names, store.rows
        if self.namespaces_ascending is not None:
            order = sorted(dict.fromkeys(namespaces) if namespaces else names,
                           reverse=not self.namespaces_ascending)
        elif namespaces:
            order = sorted(dict.fromkeys(namespaces), key=slashed)
        else:
            order = store.namespace_order()
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

    def __init__(self, spec, filters, props, rows, pause=None):
        self.filters = tuple(filters)
        self.props = props
        super().__init__(spec, rows, props, pause)

    def passes(self, row):
        return bool(query_rows.filter_rows((row,), self.filters, self.props))

    def change(self, old, new):
        super().change(old if old is not None and self.passes(old) else None,
                       new if new is not None and self.passes(new) else None)


def filtered_index(spec, filters, props, rows, broad, pause=None):
    """The FilteredIndex of ``rows`` for the filters, or None when more than 1/``broad`` of
    them pass: a broad filter's walk costs a few times its matches anyway, and not keeping it
    bounds what each filtered index holds."""
    rows = list(rows)
    matches = query_rows.filter_rows(rows, filters, props)
    if len(matches) * broad > len(rows):
        return None
    return FilteredIndex(spec, filters, props, matches, pause)
