"""cache/refit.py: a dict whose keys come and go is copied when its table grows past its
natural size, and only then."""

import sys

from dashboard_api.cache import refit


def _churned(table, size, keys, rounds):
    """``table`` with each of its ``keys`` replaced by a new one ``rounds`` times, refitted
    after each new key as its owner does; (table, size, copies made)."""
    copies = 0
    for round_ in range(1, rounds + 1):
        for key in keys:
            del table[(round_ - 1, key)]
            table[(round_, key)] = key
            refitted, size = refit.refit(table, size)
            copies += refitted is not table
            table = refitted
    return table, size, copies


def test_a_churned_dict_stays_the_size_of_a_copy():
    keys = range(8000)
    table = {(0, key): key for key in keys}
    table, size, copies = _churned(table, refit.fitted(table), keys, 5)
    assert sys.getsizeof(table) == sys.getsizeof(dict(table)) == size
    assert copies >= 1
    assert table == {(5, key): key for key in keys}


def test_without_refit_the_same_churn_doubles_the_table():
    """What the helper is for: the check above fails without it."""
    keys = range(8000)
    table = {(0, key): key for key in keys}
    for round_ in range(1, 6):
        for key in keys:
            del table[(round_ - 1, key)]
            table[(round_, key)] = key
    assert sys.getsizeof(table) >= 1.5 * sys.getsizeof(dict(table))


def test_a_small_dict_or_one_within_its_size_is_left_as_it_is():
    small = {key: key for key in range(refit.MIN_ENTRIES - 1)}
    assert refit.refit(small, 0) == (small, 0)
    assert refit.refit(small, 0)[0] is small
    large = {key: key for key in range(refit.MIN_ENTRIES)}
    same, size = refit.refit(large, refit.fitted(large))
    assert same is large and size == refit.fitted(large)
