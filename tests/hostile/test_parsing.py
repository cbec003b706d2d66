"""Bounded parsing (dashboard_api/bounded.py), without a cluster: the C parser is there, and
each limit refuses what passes it before anything is built."""

import time

import pytest

from dashboard_api import bounded
from tests.hostile.test_event_loop import BOMB

LIMITS = bounded.YamlLimits(documents=3, nodes=100, depth=5, expanded_bytes=1000)


def test_the_yaml_parser_is_libyaml():
    """PyYAML's wheel must carry libyaml: the pure-Python parser is several times slower."""
    assert bounded.C_LOADER and bounded.Loader.__name__ == "CSafeLoader"


def test_an_alias_bomb_is_refused_while_scanning():
    started = time.perf_counter()
    with pytest.raises(bounded.InputError, match="aliases counted as expanded"):
        bounded.yaml_documents(BOMB, bounded.DEPLOY_FILE)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize("text, message", [
    ("a: &x [1, 2]\nb: [*x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, "
     "*x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x, *x]", "more than 100"),
    ("a: &x " + "y" * 400 + "\nb: [*x, *x]\n", "bytes of scalars"),
    ("[[[[[[1]]]]]]", "nested deeper than 5"),
    ("a\n---\nb\n---\nc\n---\nd\n", "more than 3 documents"),
    ("a: *nowhere\n", "undefined alias"),
    ("a: [1, 2\n", "not valid YAML"),
])
def test_each_limit(text, message):
    with pytest.raises(bounded.InputError, match=message):
        bounded.yaml_documents(text, LIMITS)


def test_within_the_limits_aliases_and_merge_keys_work():
    docs = bounded.yaml_documents("base: &b {x: 1}\nmore:\n  <<: *b\n  y: 2\n---\nz\n", LIMITS)
    assert docs == [{"base": {"x": 1}, "more": {"x": 1, "y": 2}}, "z"]
    assert bounded.yaml_document("", LIMITS) is None
    with pytest.raises(bounded.InputError, match="single document"):
        bounded.yaml_document("a\n---\nb\n", LIMITS)


def test_json_depth():
    assert bounded.json_loads(b'{"a": [[1]]}') == {"a": [[1]]}
    for depth in (101, 1023, 5000):
        with pytest.raises(bounded.InputError, match="nested deeper than 100"):
            bounded.json_loads(b"[" * depth + b"]" * depth)
    assert bounded.json_loads(b"[" * 100 + b"]" * 100)
    with pytest.raises(bounded.InputError, match="not valid JSON"):
        bounded.json_loads(b"{")
