"""Issue #19 item 3: the watch cache's compact records and the re-list without a second copy."""

import copy
import json
import tracemalloc

import msgspec
from hypothesis import given, settings, strategies as st

from dashboard_api.cache import slim
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import Store
from dashboard_api.cache.watchcache import Cached
from dashboard_api.kinds import table as kinds
from dashboard_api.kubeapi import watch


def _pod(i, rv="1", uid=None, image="nginx:1.25", phase="Running", ready="True"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "namespace": "ns-%d" % (i % 2), "name": "p-%d" % i, "uid": uid or "uid-%d" % i,
        "resourceVersion": rv, "creationTimestamp": "2024-01-01T00:00:%02dZ" % (i % 60),
        "labels": {"app": "a", "tier": "web"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                             "uid": "rs-uid", "controller": True}]},
        "spec": {"nodeName": "node-1", "containers": [
            {"name": "main", "image": image,
             "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": 1}}}]},
        "status": {"phase": phase, "podIP": "10.0.0.%d" % i, "conditions": [
            {"type": "Ready", "status": ready}, {"type": "Initialized", "status": "True"}],
            "containerStatuses": [{"name": "main", "ready": True, "restartCount": 0,
                                   "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]}}


def _record(obj):
    return slim.pooled(slim.slim(kinds.get("pod"), obj))


def test_pooled_records_keep_their_bytes_and_share_repeated_values():
    kind = kinds.get("pod")
    pods = [_pod(i) for i in range(4)]
    plain = [slim.slim(kind, copy.deepcopy(p)) for p in pods]
    shared = [_record(copy.deepcopy(p)) for p in pods]
    assert [json.dumps(r, sort_keys=False) for r in shared] == \
        [json.dumps(r, sort_keys=False) for r in plain]
    a, b = shared[0], shared[1]
    # equal small objects are one object: conditions, resources, owner references, labels
    assert a["status"]["conditions"] is b["status"]["conditions"]
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert a["metadata"]["ownerReferences"] is b["metadata"]["ownerReferences"]
    assert a["metadata"]["labels"] is b["metadata"]["labels"]
    # what names one object is its own; a status kept without times is shared by the pods in
    # that state
    assert a["metadata"] is not b["metadata"]
    assert a["status"] is b["status"]
    assert a["status"]["containerStatuses"][0]["state"] == {"running": {}}
    # equal strings are one string
    assert a["spec"]["nodeName"] is b["spec"]["nodeName"]
    # a different value is not shared
    other = _record(_pod(5, image="nginx:1.26", ready="False"))
    assert other["spec"]["containers"] is not a["spec"]["containers"]
    assert other["status"]["conditions"][0] == {"type": "Ready", "status": "False"}
    assert other["status"]["conditions"][1] is a["status"]["conditions"][1]


_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2, 2),
                    st.sampled_from([0.0, -0.0, 1.0, 2.5]),
                    st.sampled_from(["", "0", "1", "true", "x"]))
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["a", "b", "name", "startedAt"]), inner, max_size=3)),
    max_leaves=12)


def test_a_previous_part_equal_in_another_order_is_not_taken():
    """Equal maps whose keys come in another order are not the same JSON: the part is not
    taken from the previous record (a label map neither), as hypothesis found below."""
    records = [{"data": [[None, {"a": None, "name": None}]]},
               {"data": [[None, {"name": None, "a": None}]]}]
    before = [json.dumps(r) for r in records]
    previous = None
    for record in records:
        previous = slim.pooled(record, previous)
    assert [json.dumps(r) for r in records] == before
    kind = kinds.get("pod")
    first = _pod(1)
    first["metadata"]["labels"] = {"app": "a", "tier": "web"}
    second = _pod(2)
    second["metadata"]["labels"] = {"tier": "web", "app": "a"}
    plain = json.dumps(slim.slim(kind, copy.deepcopy(second)))
    assert json.dumps(slim.pooled(slim.slim(kind, second), _record(first))) == plain


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["spec", "status", "data"]), _value,
                                max_size=3), min_size=1, max_size=4))
def test_pooling_never_makes_two_different_values_one(records):
    """True, 1 and 1.0 are equal in Python but not in JSON: a shared value is always the same
    JSON, whatever the records pooled before."""
    before = [json.dumps(r) for r in records]
    for record in records:
        slim.pooled(record)
    assert [json.dumps(r) for r in records] == before


def test_a_changed_record_shares_what_did_not_change_with_the_one_it_replaces(monkeypatch):
    """Issue #30: under churn, a changed object's record shares its unchanged parts with its
    previous record, not only while the pool still holds them (the pool starts again when
    full: here before every record)."""
    monkeypatch.setattr(slim, "POOL_SIZE", 0)
    kind = kinds.get("pod")
    before = _record(_pod(1))
    changed = _pod(1, rv="2", ready="False")
    changed["status"]["containerStatuses"][0]["restartCount"] = 1
    plain = json.dumps(slim.slim(kind, copy.deepcopy(changed)))
    after = slim.pooled(slim.slim(kind, changed), before)
    assert json.dumps(after) == plain
    assert after["spec"] is before["spec"]
    assert after["metadata"] is not before["metadata"]   # its resourceVersion changed
    # uid, name and creation time are unique, never pooled: taken from the previous record
    for name in ("labels", "ownerReferences", "uid", "name", "creationTimestamp"):
        assert after["metadata"][name] is before["metadata"][name], name
    assert after["status"] is not before["status"]
    assert after["status"]["conditions"] is not before["status"]["conditions"]
    assert after["status"]["conditions"][1] is before["status"]["conditions"][1]
    assert after["status"]["phase"] is before["status"]["phase"]
    assert after["status"]["containerStatuses"][0]["state"] is \
        before["status"]["containerStatuses"][0]["state"]
    # unchanged, the whole record's parts are the previous ones
    again = slim.pooled(slim.slim(kind, _pod(1, rv="2", ready="False")), before)
    assert again["spec"] is before["spec"] and again["metadata"]["labels"] is \
        before["metadata"]["labels"]


def test_a_changed_label_map_is_shared_with_the_objects_that_have_it(monkeypatch):
    """Issue #41's soak: a pod whose labels changed to those of its neighbours shares their
    map, though the pool of other values started again (here before every record); a label
    map that is not all strings is pooled as any map, its JSON unchanged."""
    monkeypatch.setattr(slim, "POOL_SIZE", 0)
    monkeypatch.setattr(slim, "_labels", {})
    kind = kinds.get("pod")
    neighbour = _record(_pod(1))
    before = _pod(2)
    before["metadata"]["labels"] = {"app": "a", "tier": "db"}
    before = _record(before)
    assert before["metadata"]["labels"] is not neighbour["metadata"]["labels"]
    after = slim.pooled(slim.slim(kind, _pod(2, rv="2")), before)   # tier: web again
    assert after["metadata"]["labels"] is neighbour["metadata"]["labels"]
    odd = _pod(3)
    odd["metadata"]["labels"] = {"app": "a", "n": 1}
    plain = json.dumps(slim.slim(kind, copy.deepcopy(odd)))
    assert json.dumps(_record(odd)) == plain
    truthy = _pod(3, rv="2")   # equal in Python to the previous map, not in JSON
    truthy["metadata"]["labels"] = {"app": "a", "n": True}
    plain = json.dumps(slim.slim(kind, copy.deepcopy(truthy)))
    assert json.dumps(slim.pooled(slim.slim(kind, truthy), _record(odd))) == plain
    monkeypatch.setattr(slim, "LABEL_MAPS", 0)   # full: starts again, still exact
    assert json.dumps(_record(_pod(4))) == json.dumps(slim.slim(kind, _pod(4)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["spec", "status", "data"]), _value,
                                max_size=3), min_size=2, max_size=4))
def test_sharing_with_the_previous_record_never_changes_a_value(records):
    """Each record pooled with the one before it as its previous record: the same JSON, even
    where Python finds True, 1 and 1.0 equal."""
    before = [json.dumps(r) for r in records]
    previous = None
    for record in records:
        previous = slim.pooled(record, previous)
    assert [json.dumps(r) for r in records] == before


def test_a_relist_reuses_the_rows_of_unchanged_objects():
    kind = kinds.get("pod")
    store = Store(kind)
    old = [row_of(kind, _record(_pod(i))) for i in range(3)]
    store.replace(old, "10")
    page = {"metadata": {"resourceVersion": "11"},
            "items": [_pod(0), _pod(1, rv="2"), _pod(2, uid="new-uid"), _pod(3)]}
    decoded = watch._decode_page(msgspec.json.encode(page))
    assert decoded.metadata == {"resourceVersion": "11"}
    to_row = lambda obj: row_of(kind, _record(obj))  # noqa: E731
    rows = watch._page_rows(decoded.items, to_row, store.reusable)
    assert rows[0] is old[0]                             # same uid and resourceVersion
    assert rows[1] is not old[1] and rows[1].obj["metadata"]["resourceVersion"] == "2"
    assert rows[2] is not old[2] and rows[2].obj["metadata"]["uid"] == "new-uid"
    assert rows[3].name == "p-3"
    # the rows made fresh equal the rows reused, byte for byte
    fresh = watch._page_rows(decoded.items, to_row, None)
    assert [json.dumps(r.obj) for r in rows] == [json.dumps(r.obj) for r in fresh]
    assert [r.keys for r in rows] == [r.keys for r in fresh]
    # the store keeps answering with the old rows until the re-list's replace
    assert store.rows[("ns-1", "p-1")] is old[1]
    store.replace(rows, "11")
    assert [r.name for r in store.scope(())] == ["p-0", "p-2", "p-1", "p-3"]
    assert store.reusable({"metadata": {"name": "p-0", "namespace": "ns-0"}}) is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "a", "a-b", "a.c", "b"]),
                          st.sampled_from(["x", "x-1", "y", "z", "\u00e9"])), unique=True,
                max_size=20),
       st.lists(st.tuples(st.sampled_from(["", "a", "a-b", "a.c", "b"]),
                          st.sampled_from(["x", "x-1", "y", "z", "\u00e9"])), unique=True,
                max_size=20),
       st.booleans())
def test_the_objects_gone_from_a_relist_are_found_in_order_as_by_a_set(live_keys, listed_keys,
                                                                       shuffled):
    """The changes a re-list makes are the same whether the objects gone are found by walking
    the LIST and the store's names in list order or by a set of every listed key; a LIST out
    of that order is walked by the set."""
    import random

    from dashboard_api.cache.relists import changes_of
    from dashboard_api.query.rows import Row

    live = {key: Row(None, key[0], key[1], ()) for key in live_keys}
    names = {}
    for namespace, name in sorted(live_keys):
        names.setdefault(namespace, []).append(name)
    for values in names.values():
        values.sort()
    listed = sorted(listed_keys, key=lambda key: (key[0] + "/", key[1]))
    if shuffled:
        random.Random(len(listed)).shuffle(listed)
    rows = [live[key] if key in live and key[1] != "y" else Row(None, key[0], key[1], ())
            for key in listed]   # the "y"s changed, the others reused

    def pairs(changes):
        return sorted((id(old), id(new)) for old, new in changes)
    walked = changes_of(live, rows, names)
    assert pairs(walked) == pairs(changes_of(live, rows))
    gone = {key for key in live_keys if key not in set(listed_keys)}
    assert {(old.namespace, old.name) for old, new in walked if new is None} == gone


def test_a_part_equal_in_python_but_not_in_json_is_never_taken_from_the_previous_record():
    """A part of the previous record equal to the new one's is taken whole, without a walk,
    only when its JSON is the same: True, 1 and 1.0 are equal in Python."""
    cases = [({"a": [1], "b": "x"}, {"a": [True], "b": "x"}),
             ({"a": [1], "b": "x"}, {"a": [1.0], "b": "x"}),
             ({"a": {"n": 0.0}}, {"a": {"n": -0.0}})]
    for first, second in cases:
        previous = slim.pooled({"spec": copy.deepcopy(first), "data": [copy.deepcopy(first)]})
        record = {"spec": copy.deepcopy(second), "data": [copy.deepcopy(second)]}
        plain = json.dumps(record)
        assert json.dumps(slim.pooled(record, previous)) == plain
        same = slim.pooled({"spec": copy.deepcopy(first), "data": [copy.deepcopy(first)]},
                           previous)
        assert same["spec"] is previous["spec"] and same["data"] is previous["data"]


def test_a_listed_record_shares_the_parts_of_the_one_made_before_it_through_the_pools_restarts(
        monkeypatch):
    """A LIST brings a replica set's pods together: each record takes the parts whose JSON is
    that of the record made before it (Cached.to_row) whole, with the pool's key of each, so
    sharing goes on through the pool's restarts (here every 40 entries) where, part by part, a
    restart left the next pods with copies of their own."""
    monkeypatch.setattr(slim, "POOL_SIZE", 40)
    kind = kinds.get("pod")
    cached = Cached(kind, None)
    items = [msgspec.json.encode(_pod(i, image="nginx:1.%d" % (i // 50))) for i in range(200)]
    rows = watch._page_rows(items, cached.to_row, decode=kind.decode)
    assert [json.dumps(r.obj) for r in rows] == \
        [json.dumps(slim.slim(kind, kind.decode(b))) for b in items]
    assert len({id(r.obj["status"]) for r in rows}) == 1
    assert len({id(r.obj["spec"]["containers"]) for r in rows}) == 4   # one per image
    resources = {id(c["resources"]) for r in rows for c in r.obj["spec"]["containers"]}
    assert len(resources) == 1


def test_a_records_own_maps_share_their_keys(monkeypatch):
    """Issue #41: the maps a record keeps for itself (its top level, metadata and spec here:
    each holds a unique value) and the new maps of the pool are compact (cache/compact.py),
    their bytes unchanged. Fails with records of plain dicts."""
    kind = kinds.get("pod")
    items = [msgspec.json.encode(_pod(i, image="nginx:1.%d" % (i % 7), ready=str(i % 3 == 0)))
             for i in range(300)]

    def listed():
        cached = Cached(kind, None)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            rows = watch._page_rows(items, cached.to_row, decode=kind.decode)
            monkeypatch.setattr(slim, "_pool", {})   # only what the records hold is counted
            monkeypatch.setattr(slim, "_keys", {})
            monkeypatch.setattr(slim, "_labels", {})
            cached._last = None
            return rows, tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    listed()   # the layouts made (a class each, once for the process), then counted without
    rows, compacted = listed()
    assert [json.dumps(r.obj) for r in rows] == \
        [json.dumps(slim.slim(kind, kind.decode(b))) for b in items]
    monkeypatch.setattr(slim, "compact", lambda mapping: mapping)
    plain_rows, plain = listed()
    assert [r.obj for r in plain_rows] == [r.obj for r in rows]
    assert compacted < 0.9 * plain
