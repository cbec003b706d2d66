"""The sorted indexes' building blocks: a sort by slices gives the order of one sort
(cache/sorted.py), and a RowList (cache/rowlist.py) keeps rows in key order, without their keys,
through any insertions and removals, its positions and pages those of a plain sorted list."""

import heapq

from hypothesis import given, settings, strategies as st

from dashboard_api.cache import rowlist, sorted as sorted_module
from dashboard_api.cache.rowlist import RowList
from dashboard_api.cache.sorted import sliced_sort


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), st.text(max_size=3)), unique=True, max_size=300),
       st.integers(1, 40))
def test_a_sort_by_slices_is_one_sort(keys, slice_size):
    sorted_module.SORT_SLICE, saved = slice_size, sorted_module.SORT_SLICE
    try:
        got = sliced_sort(list(keys), lambda k: k)
    finally:
        sorted_module.SORT_SLICE = saved
    assert got == sorted(keys)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 10 ** 6), unique=True, max_size=60), max_size=12),
       st.integers(1, 50))
def test_sorted_runs_merge_into_one_sort(runs, slice_size):
    """The merge of sorted runs (any lengths, empty ones, steps of one row) is their sort."""
    runs = [sorted({(v, i, j) for j, v in enumerate(run)}) for i, run in enumerate(runs)]
    sorted_module.SORT_SLICE, saved = slice_size, sorted_module.SORT_SLICE
    try:
        got = sorted_module._merged([list(run) for run in runs], lambda k: k)
    finally:
        sorted_module.SORT_SLICE = saved
    assert got == sorted(k for run in runs for k in run)


def test_a_merge_makes_each_key_about_twice():
    """A sort by slices makes each row's key once for its slice and once more for the merge,
    plus a few per round: rows whose slices hold disjoint ranges (by name, in list order) cost
    no bisection of the other slices at every round, nor rows of a category tied by place."""
    n = 20000
    cases = {"disjoint": list(range(n)),
             "interleaved": [(i * 7919) % n for i in range(n)],
             "few values": [(i % 5, i) for i in range(n)]}
    for name, keys in cases.items():
        calls = []

        def key(k):
            calls.append(1)
            return k
        sorted_module.SORT_SLICE, saved = 1000, sorted_module.SORT_SLICE
        try:
            got = sliced_sort(list(keys), key)
        finally:
            sorted_module.SORT_SLICE = saved
        assert got == sorted(keys), name
        assert len(calls) <= 2.3 * n, (name, len(calls))


class Row:
    """A row whose key is its value: rows compare by identity, as a store's do."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return "Row(%r)" % self.value


def key(row):
    return (-row.value[0], row.value[1])   # descending, then ascending: as index keys are


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-20, 20), st.text(max_size=2)), unique=True, max_size=60),
       st.lists(st.tuples(st.booleans(), st.integers(0, 1000)), max_size=80),
       st.integers(1, 5), st.integers(0, 70), st.integers(0, 20))
def test_a_rowlist_is_a_sorted_list_through_any_changes(initial, ops, load, start, size):
    rowlist.LOAD, saved = load, rowlist.LOAD
    try:
        rows = sorted((Row(v) for v in initial), key=key)
        kept = RowList(key, rows)
        model = list(rows)
        spare = [Row((v, "zzz%d" % v)) for v in range(-30, 30)]   # keys unlike any initial one
        for add, pick in ops:
            if add and spare:
                row = spare.pop(pick % len(spare))
                kept.add(row)
                model.append(row)
                model.sort(key=key)
            elif model:
                row = model.pop(pick % len(model))
                kept.remove(row)
            assert list(kept) == model and len(kept) == len(model)
            assert kept._maxes == [key(part[-1]) for part in kept._lists]
            assert all(0 < len(part) <= 2 * load for part in kept._lists)
            assert kept.islice(start, start + size) == model[start:start + size]
        assert kept.islice(start) == model[start:]
    finally:
        rowlist.LOAD = saved


def test_removing_a_row_that_is_not_there_says_so():
    rows = [Row((1, "a")), Row((2, "b"))]
    kept = RowList(key, sorted(rows, key=key))
    try:
        kept.remove(Row((1, "a")))   # an equal key, another row
    except ValueError:
        pass
    else:
        raise AssertionError("removed a row that was not there")
    assert len(kept) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-20, 20), st.text(max_size=2)), unique=True, min_size=1,
                max_size=60),
       st.lists(st.tuples(st.booleans(), st.integers(0, 1000)), max_size=40), st.integers(1, 5))
def test_a_rowlist_replaces_a_row_that_sorts_alike_in_its_place(initial, ops, load):
    rowlist.LOAD, saved = load, rowlist.LOAD
    try:
        model = sorted((Row(v) for v in initial), key=key)
        kept = RowList(key, model)
        model = list(model)
        for alike, pick in ops:
            at = pick % len(model)
            old = model[at]
            if alike:   # an update that moved no key: in place
                new = Row(old.value)
                assert kept.replace(old, new) is True
                model[at] = new
            else:       # a key moved: refused, nothing changed
                assert kept.replace(old, Row((old.value[0] + 100, old.value[1]))) is False
            assert list(kept) == model and len(kept) == len(model)
            assert kept._maxes == [key(part[-1]) for part in kept._lists]
        try:
            kept.replace(Row(model[0].value), Row(model[0].value))   # an equal key, another row
        except ValueError:
            pass
        else:
            raise AssertionError("replaced a row that was not there")
    finally:
        rowlist.LOAD = saved


class Keyed:
    """A store's row as an index reads it: its keys (name text, name; value text, value) and
    its place in list order."""

    def __init__(self, namespace, name, value):
        self.namespace, self.name = namespace, name
        self.keys = (name, name, str(value), value)
        self.place = (namespace + "/", name)

    def __repr__(self):
        return "Keyed(%r, %r, %r)" % (self.namespace, self.name, self.keys[3])


_PROPS = {"name": None, "value": None}   # key_function reads the properties' order only


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "kube-system"]), st.text("xyz", max_size=3),
                          st.one_of(st.integers(-3, 3), st.sampled_from(["", "R", "Run", "é"]))),
                unique_by=lambda t: t[:2], max_size=120),
       st.booleans(), st.integers(1, 5))
def test_an_index_read_backwards_off_its_mirror_is_the_index_sorted(rows, ascending, slice_size):
    """The other direction of a one-property sort, made from its mirror's order (reversed,
    runs of equal values turned back: ties stay in list order both ways), is the index a sort
    gives, namespaces' sub-indexes included. Values of one type per property, as keys_of
    makes them (a time's seconds, else text)."""
    if len({type(value) for _, _, value in rows}) > 1:
        rows = [(ns, name, str(value)) for ns, name, value in rows]
    rows = [Keyed(*row) for row in rows]
    spec = (("value", ascending),)
    sorted_module.SORT_SLICE, saved = slice_size, sorted_module.SORT_SLICE
    steps = []
    try:
        source = sorted_module.SortedIndex(sorted_module.mirror_of(spec), rows, _PROPS)
        made = sorted_module.SortedIndex(spec, source.all, _PROPS, pause=lambda: steps.append(1),
                                         mirrored=True)
    finally:
        sorted_module.SORT_SLICE = saved
    expected = sorted_module.SortedIndex(spec, rows, _PROPS)
    assert list(made.all) == list(expected.all)
    assert {ns: list(sub) for ns, sub in made.by_namespace.items()} == \
        {ns: list(sub) for ns, sub in expected.by_namespace.items()}
    assert made.all._maxes == expected.all._maxes
    if len(rows) > 3 * slice_size:   # a long build steps aside now and then
        assert steps


_SCOPES = st.lists(st.sampled_from(["a", "b", "kube-system"]), max_size=3, unique=True).map(
    lambda names: tuple(sorted(names, key=lambda ns: ns + "/")))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "kube-system"]), st.text("xyz", max_size=3),
                          st.one_of(st.integers(-3, 3), st.sampled_from(["", "R", "Run", "é"]))),
                unique_by=lambda t: t[:2], max_size=120),
       st.lists(st.integers(0, 119), max_size=30), st.booleans(), _SCOPES, st.integers(0, 40),
       st.integers(1, 25), st.integers(1, 6), st.sampled_from([-1000, 0, 64]))
def test_a_page_read_backwards_off_the_mirror_is_the_indexs(rows, removed, ascending, scope,
                                                            start, length, load, short):
    """A page of a one-property sort read off its mirror's index backwards (``MirrorOrder``:
    runs of equal values last first, each in list order) is the page of the sort's own index,
    after changes, in any scope (one namespace, several merged, all), across sublists, and
    a whole read too; its span turned back at once or run by run (``short``)."""
    if len({type(value) for _, _, value in rows}) > 1:
        rows = [(ns, name, str(value)) for ns, name, value in rows]
    rows = [Keyed(*row) for row in rows]
    spec = (("value", ascending),)
    rowlist.LOAD, saved = load, rowlist.LOAD
    sorted_module.SHORT_RUNS, saved_short = short, sorted_module.SHORT_RUNS
    try:
        source = sorted_module.SortedIndex(sorted_module.mirror_of(spec), rows, _PROPS)
        for at in sorted(set(i for i in removed if i < len(rows)), reverse=True):
            source.change(rows.pop(at), None)
        order = sorted_module.MirrorOrder(source, spec, _PROPS)
        expected = sorted_module.SortedIndex(spec, rows, _PROPS)
        assert order.page(scope, start, start + length) == \
            expected.page(scope, start, start + length)
        assert order.page(scope, start, None) == expected.page(scope, start, None)
        assert order.count(scope) == expected.count(scope)
    finally:
        rowlist.LOAD, sorted_module.SHORT_RUNS = saved, saved_short


def test_a_mirror_page_costs_a_bisection_a_run_not_a_row():
    """Reading a page in a run of 10,000 equal values makes a few dozen keys, not one a row."""
    rows = [Keyed("a", "n%05d" % i, "Run") for i in range(10000)] + [Keyed("a", "z", "A")]
    source = sorted_module.SortedIndex((("value", False),), rows, _PROPS)
    made = []
    key = source.all.key
    source.all.key = lambda row: made.append(1) or key(row)
    order = sorted_module.MirrorOrder(source, (("value", True),), _PROPS)
    assert [r.name for r in order.page((), 0, 3)] == ["z", "n00000", "n00001"]
    assert [r.name for r in order.page((), 5000, 5002)] == ["n04999", "n05000"]
    assert len(made) < 100


def test_a_mirror_turns_back_runs_of_ties_at_both_ends():
    rows = [Keyed("a", n, v) for n, v in (("p", 1), ("q", 1), ("r", 2), ("s", 3), ("t", 3))]
    backwards = sorted_module.mirror_order(rows, 3)
    assert [r.name for r in backwards] == ["s", "t", "r", "p", "q"]
    assert sorted_module.mirror_order([], 3) == []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "kube-system"]), st.text("xyz", max_size=3),
                          st.one_of(st.integers(-3, 3), st.sampled_from(["", "R", "Run", "é"]))),
                unique_by=lambda t: t[:2], max_size=120),
       st.booleans(), st.integers(0, 60), st.integers(1, 7), st.booleans())
def test_the_first_rows_of_a_category_are_those_of_the_heap(rows, ascending, count, slice_size,
                                                            mixed):
    """``first_of_few`` (values counted, the rows before the bound and the first at it picked)
    gives the heap's first rows of the index key, ties by place, both ways; for values of
    mixed types, or too many of them, it declines."""
    if not mixed and len({type(value) for _, _, value in rows}) > 1:
        rows = [(ns, name, str(value)) for ns, name, value in rows]
    rows = [Keyed(*row) for row in rows]
    spec = (("value", ascending),)
    sorted_module.SORT_SLICE, saved = slice_size, sorted_module.SORT_SLICE
    try:
        got = sorted_module.first_of_few(rows, spec, _PROPS, count)
    finally:
        sorted_module.SORT_SLICE = saved
    if len({type(row.keys[3]) for row in rows}) > 1 or not 0 < count < len(rows):
        assert got is None
    else:
        key = sorted_module.key_function(spec, _PROPS)
        assert got == heapq.nsmallest(count, rows, key=key)


def test_many_values_are_left_to_the_heap():
    rows = [Keyed("a", "n%04d" % i, i) for i in range(sorted_module.FEW_VALUES * 2)]
    assert sorted_module.first_of_few(rows, (("value", True),), _PROPS, 10) is None
    few = [Keyed("a", "n%04d" % i, i % 3) for i in range(300)]
    assert [r.name for r in sorted_module.first_of_few(few, (("value", False),), _PROPS, 3)] \
        == ["n0002", "n0005", "n0008"]
    assert sorted_module.first_of_few(few, (("value", True), ("name", True)), _PROPS, 3) is None
    # few in the sample, many in all: declined once they are counted
    sorted_module.SORT_SLICE, saved = 8, sorted_module.SORT_SLICE
    try:
        many = [Keyed("a", "n%04d" % i, i // 2) for i in range(sorted_module.FEW_VALUES * 10)]
        assert sorted_module.first_of_few(many, (("value", True),), _PROPS, 10) is None
    finally:
        sorted_module.SORT_SLICE = saved
