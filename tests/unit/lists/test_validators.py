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


def test_a_validator_given_lately_holds_while_every_proof_does():
    from dashboard_api.lists.validators import Proof, Recent
    from dashboard_api.serving.conditional import held_tags, holds
    now = [0.0]
    recent = Recent(size=2, seconds=60.0, clock=lambda: now[0])
    version, access = [1], [True]
    recent.remember("page", 'W/"t"', [Proof(lambda: version[0], 1),
                                       Proof(lambda: access[0], True)], ("store",))
    assert recent.held("page", held_tags('W/"t"'), holds) == ('W/"t"', ("store",))
    assert recent.held("page", held_tags('W/"other"'), holds) is None   # another page held
    assert recent.held("other page", held_tags('W/"t"'), holds) is None
    version[0] = 2                                                        # the store moved
    assert recent.held("page", held_tags('W/"t"'), holds) is None
    version[0], access[0] = 1, None                                       # access expired
    assert recent.held("page", held_tags('W/"t"'), holds) is None
    access[0] = True
    now[0] = 61.0                                                         # kept 60 s at most
    assert recent.held("page", held_tags('W/"t"'), holds) is None
    for key in ("a", "b", "c"):                                           # bounded
        recent.remember(key, 'W/"t"', [], ())
    assert len(recent) == 2
