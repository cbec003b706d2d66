"""dataselect against a plain reference model: any filter/sort/page gives the same items in the
same order and the same totalItems (hypothesis)."""

import datetime
import functools

from hypothesis import given, settings, strategies as st

from dashboard_api.query import listquery, properties, rows as query_rows, search
from dashboard_api.query.listquery import Query
from dashboard_api.serving.errors import ApiError

PROPS = ["name", "namespace", "creationTimestamp", "status", "unknown"]
TIMES = [None, "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.700Z", "2024-05-01T10:00:01Z",
         "2023-12-31T23:59:59Z", "2024-05-01T09:00:00.123456Z"]
text = st.text(alphabet="abAB-é0", max_size=4)


@st.composite
def an_item(draw):
    return {"objectMeta": {"name": draw(text), "namespace": draw(text),
                           "creationTimestamp": draw(st.sampled_from(TIMES))},
            "status": draw(text), "id": None}


def numbered(items):
    for i, item in enumerate(items):
        item["id"] = i
    return items


queries = st.builds(
    Query,
    filters=st.lists(st.tuples(st.sampled_from(PROPS), text), max_size=2),
    sorts=st.lists(st.tuples(st.sampled_from(PROPS), st.booleans()), max_size=3),
    items_per_page=st.integers(0, 7),
    page=st.integers(0, 6),
)

PROPERTIES = properties.properties(status=properties.Property(lambda i: i["status"]))


# --- the reference model: straight from the reference's prose, no cleverness ----------------

def model_value(item, prop):
    if prop in ("name", "namespace", "creationTimestamp"):
        return item["objectMeta"][prop]
    if prop == "status":
        return item["status"]
    raise KeyError(prop)


def model_seconds(value):
    if value is None:
        return -62135596800
    t = datetime.datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp())


def model_matches(item, filters):
    for prop, value in filters:
        if prop == "unknown":
            return False
        if value not in (model_value(item, prop) or ""):
            return False
    return True


def model_compare(sorts, a, b):
    for prop, ascending in sorts:
        if prop == "unknown":
            return 0  # comparison stops at an unknown property
        x, y = model_value(a, prop), model_value(b, prop)
        if prop == "creationTimestamp":
            x, y = model_seconds(x), model_seconds(y)
        if x != y:
            return (-1 if x < y else 1) * (1 if ascending else -1)
    return 0


def model(items, q):
    kept = [i for i in items if model_matches(i, q.filters)]
    ordered = sorted(kept, key=functools.cmp_to_key(functools.partial(model_compare, q.sorts)))
    if q.page == 0:
        return ordered, len(kept)
    start = q.items_per_page * (q.page - 1)
    return ordered[start:start + q.items_per_page], len(kept)


@settings(max_examples=600, deadline=None)
@given(st.lists(an_item(), max_size=25).map(numbered), queries)
def test_same_items_same_order_same_total(items, q):
    page, total = query_rows.select_items(items, q, PROPERTIES)
    expected, expected_total = model(items, q)
    assert [i["id"] for i in page] == [i["id"] for i in expected]
    assert total == expected_total


@settings(max_examples=200, deadline=None)
@given(st.lists(an_item(), max_size=25).map(numbered), queries)
def test_pages_partition_the_filtered_items(items, q):
    if q.items_per_page == 0:
        return
    everything, total = query_rows.select_items(items, Query(q.filters, q.sorts, page=0), PROPERTIES)
    pages = []
    for n in range(1, total // q.items_per_page + 2):
        pages += query_rows.select_items(items, Query(q.filters, q.sorts, q.items_per_page, n),
                                   PROPERTIES)[0]
    assert [i["id"] for i in pages] == [i["id"] for i in everything]


def query_args(q):
    """The request arguments that spell ``q``."""
    return {"filterBy": ",".join("%s,%s" % pair for pair in q.filters),
            "sortBy": ",".join(("a," if asc else "d,") + prop for prop, asc in q.sorts),
            "itemsPerPage": str(q.items_per_page), "page": str(q.page)}


@settings(max_examples=300, deadline=None)
@given(queries)
def test_parse_reads_back_the_query_it_was_given(q):
    parsed = listquery.parse(query_args(q).get)
    # the name's value is a search query (query/search.py), parsed
    filters = tuple((p, search.parse(v) if p == "name" else v) for p, v in q.filters)
    assert (parsed.filters, parsed.sorts, parsed.items_per_page, parsed.page) == \
        (filters, q.sorts, q.items_per_page, q.page)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["filterBy", "sortBy", "itemsPerPage", "page"]),
                          st.text(alphabet="ad,-0123x", max_size=8)), max_size=4))
def test_parse_fails_only_with_a_400(args):
    # Which malformed values are a 400 is pinned in test_dataselect.test_bad_parameters_are_400.
    try:
        listquery.parse(dict(args).get)
    except ApiError as exc:
        assert exc.code == 400
