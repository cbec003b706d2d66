"""Issue #41: a record's maps share their keys with every map of the same layout, and are in
every other way the dicts they were."""

import copy
import json
import sys
import tracemalloc

import msgspec
import pytest

from dashboard_api.cache import compact as compacting
from dashboard_api.cache.compact import compact

META = {"name": "web-1", "namespace": "default", "uid": "0f9e", "resourceVersion": "7",
        "creationTimestamp": "2026-11-30T00:00:00Z", "generateName": "web-",
        "labels": {"app": "web"}, "annotations": {"cni.projectcalico.org/podIP": "10.1.0.7/32"},
        "ownerReferences": [{"kind": "ReplicaSet", "name": "web"}]}


@pytest.fixture(autouse=True)
def _own_layouts(monkeypatch):
    monkeypatch.setattr(compacting, "_layouts", {})


@pytest.mark.parametrize("size", [1, 3, 5, 6, 9])
def test_a_compact_map_is_the_same_dict_and_smaller(size):
    mapping = dict(list(META.items())[:size])
    out = compact(dict(mapping))
    assert type(out) is dict and out == mapping
    assert list(out) == list(mapping) and list(out.values()) == list(mapping.values())
    assert json.dumps(out) == json.dumps(mapping)
    assert msgspec.json.encode(out) == msgspec.json.encode(mapping)
    assert all(out[key] is value for key, value in mapping.items())
    assert copy.deepcopy(out) == mapping and dict(out) == mapping
    compacted = _bytes(lambda: compact(dict(mapping)))
    assert compacted < _bytes(lambda: {key: value for key, value in mapping.items()})


def _bytes(make, count=500):
    """Bytes a map made by ``make`` holds, over ``count`` of them (a compact map's keys are
    shared: ``sys.getsizeof`` counts a share of them)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        maps = [make() for _ in range(count)]
        return (tracemalloc.get_traced_memory()[0] - before - sys.getsizeof(maps)) / count
    finally:
        tracemalloc.stop()


def test_maps_of_one_layout_share_one_class_and_others_get_their_own():
    first, second = compact(dict(META)), compact(dict(META, name="web-2"))
    assert first["name"] == "web-1" and second["name"] == "web-2"
    other = compact({"b": 1, "a": 2})
    assert list(other) == ["b", "a"]
    assert len(compacting._layouts) == 2
    compact({"a": 2, "b": 1})   # the same keys in another order: another layout
    assert len(compacting._layouts) == 3


def test_a_compact_map_written_to_stays_right():
    out = compact(dict(META))
    out["extra"] = 1
    out["name"] = "renamed"
    del out["uid"]
    assert out == dict({k: v for k, v in META.items() if k != "uid"}, name="renamed", extra=1)
    assert compact(dict(META)) == META   # the layout is unharmed


def _fresh(text):
    """A string equal to ``text`` that is not its interned copy."""
    return "".join(list(text))


def _plain_as_interned(mapping):
    """``compact(mapping)``, checked to be a plain dict (a new one only if some key was not
    its interned copy) equal to ``mapping`` in its order, each string key interned."""
    before = {key: value for key, value in mapping.items()}
    was_interned = all(type(k) is not str or sys.intern(k) is k for k in mapping)
    out = compact(mapping)
    assert type(out) is dict and out == before and list(out) == list(before)
    assert all(type(k) is not str or sys.intern(k) is k for k in out)
    assert (out is mapping) == was_interned
    assert not any(layout == tuple(out) for layout in compacting._layouts)
    return out


def test_what_cannot_be_compacted_is_a_plain_dict_of_interned_keys(monkeypatch):
    assert compact({}) == {}
    sys.intern("k0")
    many = {_fresh("k%d" % i): i for i in range(compacting.MAX_KEYS + 1)}
    assert _plain_as_interned(many) is not many   # "k0" was interned already
    assert _plain_as_interned(_plain_as_interned(many)) is not many
    _plain_as_interned({1: "a", "b": 2})
    for name in ("__class__", "__dict__", "__init__"):   # a custom resource's spec may hold any
        _plain_as_interned({"a": 1, name: 2})
    assert not compacting._layouts
    assert list(compact({"": 1, "a b": 2, "a.b/c": 3})) == ["", "a b", "a.b/c"]
    compacting._layouts.clear()
    monkeypatch.setattr(compacting, "LAYOUTS", 2)
    compact({"a": 1})
    compact({"b": 1})
    third = _plain_as_interned({_fresh("cc"): 1})   # a layout past the bound: a plain dict
    assert _plain_as_interned(third) is third
    assert len(compacting._layouts) == 2
    known = {"a": 5}
    assert compact(known) == known and compact(known) is not known   # a layout already made
