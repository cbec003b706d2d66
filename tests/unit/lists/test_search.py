"""The pure parts of a search across kinds (lists/search.py): which kinds it searches, how it
ranks a kind's matches, and the bounds of its page. End to end: tests/resources/test_search.py."""

import pytest

from dashboard_api.cache.rows import row_of
from dashboard_api.kinds import table as kinds
from dashboard_api.lists import search as searching
from dashboard_api.query import search
from dashboard_api.serving.errors import ApiError


class _Fetch:
    reviews = None


def test_every_cached_kind_but_events_unless_kind_names_them():
    chosen, skipped, named = searching.kinds_of(search.parse("web"))
    assert [k.name for k in chosen] == [k.name for k in kinds.TABLE if k.name != "event"]
    assert [(k.name, why) for k, why in skipped] == [("event", searching.ON_REQUEST["event"])]
    assert named == {}
    chosen, skipped, named = searching.kinds_of(search.parse("kind:events|Pods kind:pod|event"))
    assert [k.name for k in chosen] == ["pod", "event"] and skipped == []
    assert set(named) == {"pod", "event"}
    chosen, skipped, named = searching.kinds_of(search.parse("kind:pods|secret kind:secret"))
    assert [k.name for k in chosen] == ["secret"] and set(named) == {"secret"}
    with pytest.raises(ApiError) as err:
        searching.kinds_of(search.parse("kind:pod|widget"))
    assert err.value.code == 400 and "'kind:pod|widget': no kind 'widget'" in err.value.message


def test_a_kinds_matches_rank_exact_then_prefix_then_the_rest_in_their_order():
    kind = kinds.get("configmap")
    rows = [row_of(kind, {"metadata": {"namespace": "a", "name": name}})
            for name in ("my-web", "web-2", "web", "Web-1", "b-web", "web")]
    exact, prefix, rest = searching._rank(kind, rows, ("web",), 10)
    assert [r.name for r in exact] == ["web", "web"]
    assert [r.name for r in prefix] == ["web-2", "Web-1"]
    assert [r.name for r in rest] == ["my-web", "b-web"]
    exact, prefix, rest = searching._rank(kind, rows, ("b-web", "my"), 1)
    assert ([r.name for r in exact], [r.name for r in prefix], [r.name for r in rest]) == (
        ["b-web"], ["my-web"], ["web-2"])


@pytest.mark.parametrize("per_page,page,message", [
    (501, 1, "at most 500 items"), (10, 0, "search pages start at 1"),
    (100, 11, "no deeper than its first 1000 items")])
def test_the_page_is_bounded(per_page, page, message):
    with pytest.raises(ApiError) as err:
        searching.KindsSearch(_Fetch(), search.parse("web"), per_page, page)
    assert err.value.code == 400 and message in err.value.message
    ok = searching.KindsSearch(_Fetch(), search.parse("web"), 100, 10)
    assert ok.depth == searching.MAX_DEPTH
