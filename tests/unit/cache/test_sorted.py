"""The sorted indexes' building blocks: a sort by slices gives the order of one sort
(cache/sorted.py), and a RowList (cache/rowlist.py) keeps rows in key order, without their keys,
through any insertions and removals, its positions and pages those of a plain sorted list."""

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
