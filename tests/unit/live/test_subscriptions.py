"""What a subscription names (live/subscriptions.py): a list as the browser fetches it."""

import pytest

from dashboard_api.live.subscriptions import MAX_PATH, parse
from dashboard_api.query import search
from dashboard_api.serving.errors import ApiError


def test_a_list_path_as_the_browser_fetches_it():
    listing = parse("api/v1/pod/a,b?itemsPerPage=10&page=2&sortBy=d,creationTimestamp"
                    "&filterBy=name,web&metricNames=cpu/usage")
    assert listing.kind.name == "pod" and listing.namespaces.names == ("a", "b")
    query = listing.query
    assert (query.items_per_page, query.page, query.sorts, query.filters) == (
        10, 2, (("creationTimestamp", False),), (("name", search.parse("web")),))
    assert query.metric_names == ("cpu/usage",)
    assert parse("/api/v1/pod/%20").namespaces.all          # the web UI's "all namespaces"
    assert parse("api/v1/namespace").kind.name == "namespace"


@pytest.mark.parametrize("path, code", [
    (None, 400), ("", 400), (42, 400), ("api/v2/pod", 400), ("api/v1", 400),
    ("api/v1/pod/ns/name/extra", 400), ("https://elsewhere/api/v1/pod", 400),
    ("//elsewhere/api/v1/pod", 400), ("api/v1/pod#frag", 400), ("api/v1/namespace/ns", 400),
    ("api/v1/pod?itemsPerPage=-1", 400), ("api/v1/pod?sortBy=x,name", 400),
    ("api/v1/pod?filterBy=name,%01", 400), ("api/v1/" + "x" * MAX_PATH, 400),
    ("api/v1/nosuchkind", 404),
])
def test_anything_else_is_refused_with_the_lists_own_codes(path, code):
    with pytest.raises(ApiError) as refused:
        parse(path)
    assert refused.value.code == code, refused.value.message
