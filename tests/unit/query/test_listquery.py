"""dataselect: the upstream fixture tables (reference §2.4, §2.5) and parameter parsing."""

import pytest

from dashboard_api.query import listquery, properties, rows as query_rows
from dashboard_api.query.listquery import Query
from dashboard_api.serving.errors import ApiError

# (name, id) with id exposed as the creation time in seconds, as upstream's test fixture.
FIXTURE = [("ab", 1), ("ab", 2), ("ab", 3), ("ac", 4), ("ac", 5), ("ad", 6), ("ba", 7),
           ("da", 8), ("ea", 9), ("aa", 10)]


def items():
    return [{"objectMeta": {"name": n, "creationTimestamp": "2024-05-01T10:00:%02dZ" % i},
             "id": i} for n, i in FIXTURE]


def ids(page):
    return [i["id"] for i in page]


def sort(raw):
    q = listquery.parse({"sortBy": raw, "page": "0"}.get)
    return ids(query_rows.select_items(items(), q, properties.COMMON)[0])


@pytest.mark.parametrize("sort_by,expected", [
    ("a,creationTimestamp", list(range(1, 11))),
    ("d,creationTimestamp", list(range(10, 0, -1))),
    ("a,name,d,creationTimestamp", [10, 3, 2, 1, 5, 4, 6, 7, 8, 9]),
    ("a,nosuchproperty", list(range(1, 11))),
    ("a,nosuchproperty,d,creationTimestamp", list(range(1, 11))),
    ("", list(range(1, 11))),
])
def test_sort_matches_upstream_table(sort_by, expected):
    assert sort(sort_by) == expected


def test_sort_of_empty_list():
    assert query_rows.select_items([], Query(sorts=[("name", True)], page=0), properties.COMMON) == \
        ([], 0)


@pytest.mark.parametrize("per_page,page,expected", [
    (1, 6, [6]), (1, 11, []), (2, 2, [3, 4]), (3, 4, [10]), (11, 1, list(range(1, 11))),
    (3, 5, []), (0, 1, []), (5, 0, list(range(1, 11))), (10, 2, []), (10, 1, list(range(1, 11))),
])
def test_pagination_matches_upstream_table(per_page, page, expected):
    # Upstream's table is 0-based; here pages are 1-based and page 0 means everything.
    page_items, total = query_rows.select_items(items(), Query(items_per_page=per_page, page=page),
                                          properties.COMMON)
    assert ids(page_items) == expected
    assert total == 10


def test_defaults_are_page_one_of_ten():
    q = listquery.parse({}.get)
    assert (q.filters, q.sorts, q.items_per_page, q.page) == ((), (), 10, 1)
    many = items() * 2
    assert len(query_rows.select_items(many, q, properties.COMMON)[0]) == 10


def test_filter_is_substring_and_all_pairs_the_name_ignoring_case():
    q = listquery.parse({"filterBy": "name,a", "page": "0"}.get)
    assert ids(query_rows.select_items(items(), q, properties.COMMON)[0]) == [1, 2, 3, 4, 5, 6, 7, 8, 9,
                                                                       10]
    # The name's value is a search query (issue #38): its words ignore case.
    q = listquery.parse({"filterBy": "name,A", "page": "0"}.get)
    assert len(query_rows.select_items(items(), q, properties.COMMON)[0]) == 10
    q = listquery.parse({"filterBy": "name,a,name,b", "page": "0"}.get)
    assert ids(query_rows.select_items(items(), q, properties.COMMON)[0]) == [1, 2, 3, 7]
    q = listquery.parse({"filterBy": "name,a b", "page": "0"}.get)
    assert ids(query_rows.select_items(items(), q, properties.COMMON)[0]) == [1, 2, 3, 7]
    # Other properties keep the case-sensitive substring.
    q = listquery.parse({"filterBy": "creationTimestamp,t", "page": "0"}.get)
    assert query_rows.select_items(items(), q, properties.COMMON) == ([], 0)


def test_filter_total_counts_before_paging():
    q = listquery.parse({"filterBy": "name,ab", "itemsPerPage": "2", "page": "2"}.get)
    page_items, total = query_rows.select_items(items(), q, properties.COMMON)
    assert (ids(page_items), total) == ([3], 3)


def test_unknown_filter_property_keeps_nothing_and_empty_value_keeps_all():
    q = listquery.parse({"filterBy": "nosuch,a"}.get)
    assert query_rows.select_items(items(), q, properties.COMMON) == ([], 0)
    q = listquery.parse({"filterBy": "name,", "page": "0"}.get)
    assert len(query_rows.select_items(items(), q, properties.COMMON)[0]) == 10


def test_filter_on_a_time_property_matches_its_text():
    # Upstream crashed here; the RFC 3339 text is matched instead.
    q = listquery.parse({"filterBy": "creationTimestamp,10:00:0", "page": "0"}.get)
    assert ids(query_rows.select_items(items(), q, properties.COMMON)[0]) == list(range(1, 10))


def test_filter_can_be_turned_off_for_event_lists():
    q = listquery.parse({"filterBy": "name,zz", "page": "0"}.get)
    assert query_rows.select_items(items(), q, properties.COMMON, filterable=False)[1] == 10


def test_times_sort_by_whole_seconds_and_unset_first():
    rows = [{"objectMeta": {"name": "b", "creationTimestamp": "2024-05-01T10:00:00.900Z"}},
            {"objectMeta": {"name": "a", "creationTimestamp": "2024-05-01T10:00:00.100Z"}},
            {"objectMeta": {"name": "c", "creationTimestamp": None}}]
    q = Query(sorts=[("creationTimestamp", True)], page=0)
    assert [r["objectMeta"]["name"] for r in query_rows.select_items(rows, q, properties.COMMON)[0]] \
        == ["c", "b", "a"]


@pytest.mark.parametrize("args,message", [
    ({"filterBy": "name"}, "filterBy must be comma-separated pairs"),
    ({"sortBy": "a,name,d"}, "sortBy must be comma-separated pairs"),
    ({"sortBy": "x,name"}, "sortBy order must be 'a' or 'd'"),
    ({"itemsPerPage": "ten"}, "itemsPerPage must be an integer"),
    ({"page": "1.5"}, "page must be an integer"),
    ({"page": "-1"}, "page must be at least 0"),
    ({"itemsPerPage": "-3"}, "itemsPerPage must be at least 0"),
])
def test_bad_parameters_are_400(args, message):
    with pytest.raises(ApiError) as err:
        listquery.parse(args.get)
    assert err.value.code == 400 and err.value.reason == "BadRequest"
    assert message in err.value.message
