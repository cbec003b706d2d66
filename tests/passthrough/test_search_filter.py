"""The search query as every list's name filter (issue #38) on the pass-through path: the same
answers as from the watch cache (tests/resources/test_search_filter.py)."""

from tests.resources import searchcases


def test_every_term_on_the_lists_passed_through(cluster, gateway, namespace, admin_token):
    label = searchcases.seed(cluster, namespace)
    searchcases.check(gateway, admin_token, namespace, label)
    searchcases.bad_query(gateway, "/api/v1/pod/" + namespace, admin_token)
