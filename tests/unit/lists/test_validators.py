"""A list page's validator (lists/validators.py): a keyed digest of what the page depends on,
and the versions of its related reads."""

from dashboard_api.lists.validators import Validators, read_versions
from dashboard_api.serving.errors import ApiError


class Versioned(list):
    def __init__(self, items, view_key):
        super().__init__(items)
        self.view_key = view_key


def test_a_tag_is_weak_stable_and_keyed():
    one = Validators(b"k" * 32)
    tag = one.tag("identity", "pod", ("ns",), (1, 2), [("refused",)])
    assert tag.startswith('W/"') and tag.endswith('"')
    assert tag == one.tag("identity", "pod", ("ns",), (1, 2), [("refused",)])
    assert tag != one.tag("other identity", "pod", ("ns",), (1, 2), [("refused",)])
    assert tag != one.tag("identity", "pod", ("ns",), (1, 3), [("refused",)])
    # Another pipeline (a restart, another replica, a cluster started again): another tag.
    assert tag != Validators(b"j" * 32).tag("identity", "pod", ("ns",), (1, 2), [("refused",)])
    assert Validators().tag(1) != Validators().tag(1)


def test_related_reads_need_a_version_unless_refused_or_not_made():
    cached = Versioned([{"a": 1}], (7, 3, ()))
    assert read_versions(("events",), {"events": cached}, {}) == ((7, 3, ()),)
    # Not read (a list of no rows reads nothing): nothing to compare, nothing to fear.
    assert read_versions(("events",), {}, {}) == (None,)
    # Read from the API server now: the next read may differ.
    assert read_versions(("events",), {"events": []}, {}) is None
    assert read_versions(("pods", "events"), {"pods": cached, "events": [{"x": 1}]}, {}) is None
    # Refused: empty, and the refusal is in the errors the tag covers.
    refusal = ApiError(403, "events is forbidden")
    assert read_versions(("events",), {"events": []}, {"events": refusal}) == ("refused",)
