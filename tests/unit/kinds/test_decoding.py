"""Issue #30: a kind's typed decoder (kinds/decoding.py) reads only what its projection keeps, and
the cache's record is the one the generic decoder's object gives: the same values, the same
JSON of each field (keys in the same order; the top-level fields in the API server's order), on
the stand-in's objects, on objects with managedFields, on objects of unexpected shapes (where it
falls back), and on generated ones."""

import json

import msgspec
import pytest
from hypothesis import given, settings, strategies as st

from dashboard_api.cache import slim
from dashboard_api.kinds import decoding, table as kinds
from dashboard_api.kubeapi import watch
from tests.bench.composition import Composition
from tests.bench.standin import Pods

TYPED = ("pod", "deployment", "replicationcontroller", "daemonset", "statefulset", "job", "node",
         "configmap")
MANAGED = [{"manager": "kubelet", "operation": "Update", "apiVersion": "v1",
            "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1", "subresource": "status",
            "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}}},
                                      "f:phase": {}}}}]


def assert_same(name, raw, in_order=False):
    """The kind's decoder gives the record the generic decoder and the projection give, or the
    same error: the same values, the same JSON of each field (keys in the same order);
    ``in_order``: its top-level fields as the bytes had them too (the API server's order)."""
    kind = kinds.get(name)

    def record(obj):
        return slim.record(obj) if isinstance(obj, dict) else obj
    try:
        expected = decoding.generic(raw)
        if isinstance(expected, dict):
            expected = slim.slim(kind, expected)
    except Exception as exc:   # noqa: BLE001 (the same failure is what is asserted)
        with pytest.raises(type(exc)):
            record(kind.decode(raw))
        return
    got = record(kind.decode(raw))
    assert got == expected
    if isinstance(got, dict):
        assert {k: json.dumps(v) for k, v in got.items()} == {
            k: json.dumps(v) for k, v in expected.items()}
    if in_order:
        assert json.dumps(got) == json.dumps(expected)


def _standin():
    pods = Pods(300)
    for i in range(0, pods.n, 3):   # crash-looping: a waiting container, not ready
        pods.change(i, 2)
    composition = Composition(pods, 8)
    out = [("pod", pods.encode(i).encode()) for i in range(0, pods.n, 7)]
    for plural, name in (("nodes", "node"), ("configmaps", "configmap")):
        out += [(name, composition.encode(plural, i).encode())
                for i in range(min(composition.sizes[plural], 40))]
    return out


def test_the_kinds_with_a_typed_decoder():
    typed = [k.name for k in kinds.TABLE if decoding.typed_fields(k.projection) is not None]
    assert typed == list(TYPED)
    # read whole: a replica set's template (its fingerprint), an event's many fields
    for name in ("replicaset", "event", "endpointslice", "service"):
        assert decoding.typed_fields(kinds.get(name).projection) is None
    # kept whole: decoded, not copied; read whole: projected with the record (Cached.to_row),
    # so that a re-list's unchanged objects (their rows kept) are not
    assert kinds.get("namespace").decode is decoding.generic
    assert kinds.get("namespace").decode_projects
    assert kinds.get("replicaset").decode is decoding.generic
    assert not kinds.get("replicaset").decode_projects
    assert all(kinds.get(name).decode_projects for name in TYPED)


def test_a_typed_object_is_not_projected_again():
    """Issue #41: what the typed decode read is what the projection keeps; the projection's
    code runs only where the typed decode could not read the object (then on all of it)."""
    calls = []

    def project(obj):
        calls.append(obj)
        return kinds.get("pod").slim(obj)
    decode = decoding.decoder(kinds.get("pod").projection, project)
    pod = json.loads(Pods(10).encode(1))
    assert slim.record(decode(json.dumps(pod).encode())) == slim.slim(kinds.get("pod"), pod)
    assert calls == []
    pod["spec"]["containers"] = None   # not as typed: read whole, then projected
    assert slim.record(decode(json.dumps(pod).encode())) == slim.slim(kinds.get("pod"), pod)
    assert len(calls) == 1


def test_stand_in_objects_give_the_same_records():
    for name, raw in _standin():
        assert_same(name, raw, in_order=True)


def test_what_the_typed_decode_skips():
    pod = json.loads(Pods(10).encode(1))
    obj = kinds.get("pod").decode(json.dumps(pod).encode())
    assert "env" not in obj["spec"]["containers"][0]          # never built
    assert "tolerations" not in obj["spec"]
    assert "env" in pod["spec"]["containers"][0]
    pod["metadata"]["managedFields"] = MANAGED
    obj = kinds.get("pod").decode(json.dumps(pod).encode())
    assert "managedFields" not in obj["metadata"]
    assert obj["metadata"]["labels"] == pod["metadata"]["labels"]
    config = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"},
              "immutable": True, "data": {"big": "x" * 4096}}
    assert kinds.get("configmap").decode(json.dumps(config).encode()) == {
        "kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}, "immutable": True}


def test_managed_fields_anywhere():
    pod = json.loads(Pods(10).encode(2))
    pod["metadata"]["managedFields"] = MANAGED
    assert_same("pod", json.dumps(pod).encode())
    pod["metadata"]["labels"]["managedFields"] = "a label of that name"
    assert_same("pod", json.dumps(pod).encode())
    pod["metadata"]["managedFields"] = None
    assert_same("pod", json.dumps(pod).encode())
    node = json.loads(Composition(Pods(10), 2).encode("nodes", 0))
    node["metadata"]["managedFields"] = MANAGED
    assert_same("node", json.dumps(node).encode())


@pytest.mark.parametrize("change", [
    lambda o: o["spec"].update(containers=None),          # null where a list is read
    lambda o: o["spec"].update(containers="main"),
    lambda o: o["spec"]["containers"].append(7),          # an element not an object
    lambda o: o["spec"].update(volumes=[{"name": "v"}, 3, {"persistentVolumeClaim": {}}]),
    lambda o: o["status"].update(conditions={"type": "Ready"}),
    lambda o: o.update(status="Running"),
    lambda o: o.update(spec=None),
    lambda o: o.update(extra={"a": 1}),                   # a top-level field not declared
    lambda o: o.update(metadata=None),
    lambda o: o.update(metadata=[1, 2]),
    lambda o: o["status"]["containerStatuses"][0].update(state=None),
    lambda o: o["status"]["containerStatuses"][0].update(state={"waiting": "x"}),
    lambda o: o["spec"].update(nodeName=1.0, priority=True),
])
def test_unexpected_shapes_give_the_same_records(change):
    pod = json.loads(Pods(10).encode(3))
    change(pod)
    assert_same("pod", json.dumps(pod).encode())


@pytest.mark.parametrize("raw", [b"null", b"[]", b'"pod"', b"7", b"{}", b'{"spec": {}}',
                                 b"{", b'{"spec": {"containers": [}'])
def test_what_is_not_an_object_of_the_kind(raw):
    assert_same("pod", raw)
    assert_same("configmap", raw)


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                    st.sampled_from(["", "x", "Running", "True", "Ready"]))
# Field names a projection reads, and others, so the typed decode meets both.
_names = st.sampled_from(["containers", "initContainers", "name", "image", "resources", "env",
                          "state", "waiting", "running", "terminated", "reason", "phase",
                          "conditions", "type", "status", "nodeName", "volumes",
                          "persistentVolumeClaim", "containerStatuses", "ready", "allocatable",
                          "nodeInfo", "images", "template", "spec", "replicas", "x"])
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(_names, inner, max_size=4)), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TYPED), st.dictionaries(
    st.sampled_from(["kind", "apiVersion", "metadata", "spec", "status", "data", "immutable",
                     "extra"]), _value, max_size=5))
def test_generated_objects_give_the_same_records(name, obj):
    assert_same(name, json.dumps(obj).encode())


def test_watch_events_are_read_as_before():
    pod = Pods(10).encode(4)
    decode = kinds.get("pod").decode
    lines = ['{"type": "ADDED", "object": %s}' % pod,
             '{"type": "BOOKMARK", "object": {"kind": "Pod", "apiVersion": "v1", '
             '"metadata": {"resourceVersion": "12"}}}',
             '{"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", '
             '"status": "Failure", "code": 410, "reason": "Expired"}}',
             '{"type": "MODIFIED", "object": null}', '{"type": "DELETED"}',
             '{"type": 7, "object": {"metadata": {}}}', '{"object": %s}' % pod]
    for line in lines:
        event = decoding.generic(line.encode())
        kind, obj = watch._watch_event(line.encode(), decode)
        assert kind == event.get("type")
        expected = event.get("object") or {}
        assert slim.slim(kinds.get("pod"), obj) == slim.slim(kinds.get("pod"), expected)
    with pytest.raises(msgspec.DecodeError):
        watch._watch_event(b'{"type": "ADDED", "object": {', decode)


def test_a_watch_event_s_object_is_read_by_the_kind_s_decoder():
    """Issue #41: the watch road reads an event's object with the kind's typed decoder, as the
    LIST road reads a page's items, not the whole line with the generic one (which also decodes
    managedFields, and made records larger than a LIST's)."""
    pod = Pods(10).encode(4)
    typed = kinds.get("pod").decode
    seen = []

    def decode(raw):
        seen.append(bytes(raw))
        return typed(raw)

    for kind in ("ADDED", "MODIFIED", "DELETED"):
        seen.clear()
        line = '{"type": "%s", "object": %s}' % (kind, pod)
        assert watch._watch_event(line.encode(), decode)[0] == kind
        assert seen == [pod.encode()]
    seen.clear()
    for line in ('{"type": "MODIFIED", "object": null}', '{"type": "DELETED"}'):
        assert watch._watch_event(line.encode(), decode) == (json.loads(line)["type"], {})
    assert seen == []
