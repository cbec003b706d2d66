"""Bounded parsing (dashboard_api/serving/bounded.py), without a cluster: the C parser is there, and
each limit refuses what passes it before anything is built."""

import time

import pytest
import yaml

from dashboard_api.serving import bounded, nesting
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
    for depth in (101, 1023, 1025, 5000):
        with pytest.raises(bounded.InputError, match="nested deeper than 100"):
            bounded.json_loads(b"[" * depth + b"]" * depth)
    with pytest.raises(bounded.InputError, match="nested deeper than 100"):
        bounded.json_loads(b'{"a":' * 2000 + b"1" + b"}" * 2000)
    assert bounded.json_loads(b"[" * 100 + b"]" * 100)
    # Brackets in strings (escaped quotes and backslashes among them) are not nesting.
    inside = '[' * 100 + '"' + '[{\\\\\\"' * 2000 + '"' + ']' * 100
    assert bounded.json_loads(inside.encode()) == bounded.json_loads(inside)
    with pytest.raises(bounded.InputError, match="not valid JSON"):
        bounded.json_loads(b"{")


# Each nests past 1,000 levels, where libyaml 0.2.6 (PyYAML 6.0.4) refuses by itself: in flow
# collections on one line its scanner reads ahead of the events, past any depth they show.
DEEP = {
    "flow sequences": "[" * 5000 + "]" * 5000,
    "flow mappings, after a key": "a: " + "{b: " * 1100 + "}" * 1100,
    "flow in a block sequence": "- a\n- " + "[" * 5000 + "]" * 5000 + "\n",
    "after quotes and comments": "a: '[['\nb: \"]]\" # [[\nc: |\n  ]]\nd: " + "[" * 5000,
    "in a later document": "a: 1\n---\n" + "[{x: " * 600 + "}]" * 600,
    "compact block sequences": "- " * 2000 + "x\n",
    "compact keys": "? " * 2000 + "x\n",
    "block and flow on one line": "- " * 60 + "{a: " * 60 + "}" * 60 + "\n",
    "mappings by indentation": "".join(" " * i + "k:\n" for i in range(1100)) + " " * 1100 + "v\n",
    "sequences by indentation": "".join(" " * i + "-\n" for i in range(1100)) + " " * 1100 + "v\n",
}


@pytest.fixture(params=["CSafeLoader", "SafeLoader"])
def loader(request, monkeypatch):
    """Both of PyYAML's loaders: libyaml's and the pure-Python one (PyYAML without libyaml)."""
    monkeypatch.setattr(bounded, "Loader", getattr(yaml, request.param))


@pytest.mark.parametrize("name", DEEP)
def test_deep_nesting_is_refused_by_the_projects_own_limit(loader, name):
    """The project's message, whatever the parser would say: the pre-scan sees the depth."""
    text = DEEP[name]
    assert nesting.yaml_depth(text, bounded.DEPLOY_FILE.depth) > bounded.DEPLOY_FILE.depth
    for limits in (bounded.DEPLOY_FILE, bounded.KUBECONFIG):
        started = time.perf_counter()
        with pytest.raises(bounded.InputError, match="^nested deeper than %d levels$"
                           % limits.depth):
            bounded.yaml_documents(text, limits)
        assert time.perf_counter() - started < 0.5


def test_within_the_limit_brackets_in_scalars_are_not_nesting(loader):
    text = ("a: " + "[" * 99 + "x" + "]" * 99 + "\n"  # 100 levels with the mapping
            "b: '" + "[" * 2000 + "'\n"
            "c: \"{{\\\"" + "[" * 2000 + "\"\n"
            "d: echo a[b] " + "{" * 2000 + "\n"
            "e: |\n  " + "[" * 2000 + "\n"
            "f: plain\n  " + "[" * 2000 + "\n"
            "# " + "[" * 2000 + "\n")
    doc = bounded.yaml_document(text, bounded.DEPLOY_FILE)
    assert doc["b"] == doc["e"].strip() == "[" * 2000
    assert doc["f"] == "plain " + "[" * 2000
