import pytest

from dashboard_api.query.reads import MAX_NAMESPACES, Namespaces
from dashboard_api.serving.errors import ApiError


@pytest.mark.parametrize("segment", [None, "", " ", " , ,"])
def test_blank_segments_mean_every_namespace(segment):
    assert Namespaces.parse(segment).all


def test_comma_lists_are_trimmed_and_deduplicated():
    assert Namespaces.parse(" a, b ,a,,c").names == ("a", "b", "c")


def test_too_many_namespaces_is_a_bad_request():
    ok = ",".join("n%d" % i for i in range(MAX_NAMESPACES))
    assert len(Namespaces.parse(ok).names) == MAX_NAMESPACES
    with pytest.raises(ApiError) as caught:
        Namespaces.parse(ok + ",one-more")
    assert caught.value.code == 400
