"""If-None-Match read bounded, compared weakly (serving/conditional.py)."""

from dashboard_api.serving import conditional


def test_tags_are_read_weak_or_strong_and_star_is_any():
    held = conditional.held_tags('W/"a", "b" ,W/"c"')
    assert held == {"a", "b", "c"}
    assert conditional.holds(held, 'W/"a"') and conditional.holds(held, '"b"')
    assert not conditional.holds(held, 'W/"d"')
    assert conditional.holds(conditional.held_tags("*"), 'W/"anything"')


def test_nothing_held_holds_nothing():
    for header in (None, "", "junk", 'W/"unterminated'):
        held = conditional.held_tags(header)
        assert not conditional.holds(held, 'W/"x"'), header
    assert not conditional.holds(conditional.held_tags("*"), None)   # no tag: never


def test_a_header_of_many_tags_is_read_bounded():
    header = ", ".join('"%d"' % i for i in range(10000))
    held = conditional.held_tags(header)
    assert len(held) == conditional.MAX_TAGS
    assert conditional.holds(held, '"0"') and not conditional.holds(held, '"9999"')
