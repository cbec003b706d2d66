"""The depth of YAML and JSON text read before any parser (dashboard_api/serving/nesting.py): never more
than the true depth of a valid document (no valid document is refused), exact for flow
collections and JSON, and over a limit before the parser's own limits can answer."""

import json
from unittest import mock

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from dashboard_api.serving import bounded
from dashboard_api.serving.nesting import json_depth, yaml_depth

# Characters that mean something to a YAML or JSON scanner, and some that do not.
TRICKY = "[]{}'\"#:-?,|>&*!%@`\\ \t\nab1é\u2028"
texts = st.text(alphabet=TRICKY, max_size=12)
leaves = st.none() | st.booleans() | st.integers(-5, 5) | texts
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(texts, inner, max_size=3), max_leaves=25)


def depth(value):
    """The true depth: lists and mappings nested in one another (a scalar is 0)."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def deepest_event(text):
    """The depth the parser's events reach (libyaml), which counts indentless sequences."""
    level = deepest = 0
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            level += 1
            deepest = max(deepest, level)
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            level -= 1
    return deepest


@settings(max_examples=400, deadline=None)
@given(st.lists(values, min_size=1, max_size=3), st.sampled_from([None, '"', "'", "|", ">"]),
       st.sampled_from([2, 4]), st.sampled_from([12, 80]), st.booleans())
def test_never_deeper_than_the_document_and_exact_in_flow_style(docs, style, indent, width,
                                                                   start):
    true = max(map(depth, docs))
    for flow in (True, False, None):
        text = yaml.safe_dump_all(docs, default_flow_style=flow, default_style=style,
                                  indent=indent, width=width, explicit_start=start,
                                  allow_unicode=True)
        # (PyYAML's emitter does not always give back the strings, but always the structure.)
        assert max(map(depth, yaml.load_all(text, Loader=yaml.CSafeLoader))) == true
        found = yaml_depth(text)
        assert found <= deepest_event(text) and found <= true, text
        if flow:
            assert found == true, text
    for indent in (None, 1):
        text = json.dumps(docs[0], indent=indent)
        assert yaml_depth(text) == json_depth(text) == json_depth(text.encode()) == \
            depth(docs[0]), text


@settings(max_examples=100, deadline=None)
@given(values, st.integers(1, 6), st.sampled_from(["CSafeLoader", "SafeLoader"]))
def test_deeper_than_a_limit_is_refused_with_the_projects_message(value, extra, loader):
    """Wrapped in enough lists to pass the limit, a document is refused in every style, by
    the pre-scan alone in flow style and JSON."""
    for _ in range(extra):
        value = [value]
    limit = depth(value) - 1
    limits = bounded.YamlLimits(documents=1, nodes=10**6, depth=limit, expanded_bytes=10**9)
    with mock.patch.object(bounded, "Loader", getattr(yaml, loader)):
        for flow in (True, False, None):
            text = yaml.safe_dump(value, default_flow_style=flow, width=12)
            assert yaml_depth(text, limit) > limit or not flow, text
            with pytest.raises(bounded.InputError, match="^nested deeper than %d levels$"
                               % limit):
                bounded.yaml_documents(text, limits)
    assert json_depth(json.dumps(value), limit) == depth(value) > limit
    with pytest.raises(bounded.InputError, match="^nested deeper than %d levels$" % limit):
        bounded.json_loads(json.dumps(value).encode(), limit)


@pytest.mark.parametrize("text, expected", [
    ("command: echo a[b] {c} 'd", 1),              # brackets and quotes in a plain scalar
    ("a: '[[[ it''s'\nb: \"[\\\"[\\\\\"\n", 1),    # in quoted scalars, with their escapes
    ("a: '[[\n  [['\nb: \"{{\\\n  {{\"\n", 1),     # quoted over lines
    ("# [[[\na: [x] # {{{\n", 2),                  # comments
    ("a: [x, # ]]]\n  y]\n", 2),                   # a comment inside a flow collection
    ("a: |\n  [[[\n  {{\nb: [1]\n", 2),            # a block scalar, then a collection
    ("a: >-2\n   [[[\n  {{\nb: 1\n", 1),           # with an indentation indicator
    ("- |\n\n  [[\n   [[\n- [[1]]\n", 3),          # blank lines; the sequence goes on
    ("a: foo\n  [bar {baz\nb: [1]\n", 2),          # a plain scalar going on a second line
    ("top\n[[not a list\n", 0),                    # ... at the top of a document
    ("a: foo # [[\nb:\n  - [[1]]\n", 4),            # a comment ends a plain scalar
    ("---\n[1]\n---\n[[2]]\n...\n--- [[[3]]]\n", 3),  # documents; the deepest counts
    ("- {a: [1]}\n- [{b: c}]\n", 3),               # flow collections in a block sequence
    ("- - - x\n", 3),                              # compact block sequences
    ("? - - a\n: - b\n", 3),                       # compact complex keys
    ("- a: b\n  c: [d]\n", 3),                     # a compact mapping
    ("a:\r\n  b: [1]\r\n", 3),                     # CRLF
    ("a:\t1\nb:\t[2, [\t3]]\n", 3),                 # tabs
    ("[a: [b: c]]\n", 2),                          # single-pair mappings are not counted
    ("[it's, a'b, 'c']\n", 1),                     # quotes inside flow plain scalars
    ("[a\n 'b, c]\n", 1),                          # ... on a continued line
    ('{"a":[1,{"b":"]}"}],"c":"\\"[["}\n', 3),     # JSON
    ("%YAML 1.1\n---\n{a: [b]}\n", 2),             # a directive
    ("\ufeff[[1]]\n", 2),                          # a byte order mark
    ("a: &x [1]\nb: *x\nc: !!seq [[1]]\n", 3),     # anchors, aliases, tags
])
def test_hand_written(text, expected):
    assert yaml_depth(text) == expected
    assert expected <= deepest_event(text)


def test_json_escapes():
    assert json_depth(b'["\\\\", "\\"[", "\\\\\\"{"]') == 1
    assert json_depth('{"a": "[[[", "b": [[]]}') == 3
    assert json_depth(b"[" * 5000 + b"]" * 5000) == 5000
    assert json_depth(b"[[1]]", limit=5) <= 5  # few brackets: not looked at further


def test_stops_past_the_limit():
    assert 41 <= yaml_depth("[" * 1_000_000, limit=40) < 100
    assert 41 <= yaml_depth("- " * 1_000_000, limit=40) < 100
