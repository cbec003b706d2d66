"""Issue #30: a cached record keeps only what the lists read. Every list item (and sort/filter
keys, list status facts and join index values) made from a slim record equals the one made from
the whole object, on the bench stand-in's objects of every kind it serves."""

import copy
import json

from dashboard_api.cache import slim
from dashboard_api.kinds import joins, table as kinds
from dashboard_api.summaries.related import Related
from dashboard_api.summaries.workloads import items as workloads
from tests.bench.composition import Composition
from tests.bench.standin import Pods

PLURALS = {"replicasets": "replicaset", "nodes": "node", "events": "event",
           "services": "service", "endpointslices": "endpointslice", "configmaps": "configmap"}


def _objects():
    pods = Pods(300)
    for i in range(0, pods.n, 3):   # crash-looping: a waiting container, not ready
        pods.change(i, 2)
    composition = Composition(pods, 8)
    out = [("pod", json.loads(pods.encode(i))) for i in range(0, pods.n, 7)]
    for plural, name in PLURALS.items():
        count = composition.sizes[plural]
        out += [(name, json.loads(composition.encode(plural, i))) for i in range(min(count, 40))]
    return out


def _seen(kind, obj):
    """What the lists read of an object: its item, its keys, its list status facts, the
    values its join indexes file it under."""
    seen = {"item": kind.item(obj, Related()), "keys": kind.key_item(obj),
            "indexes": {name: fn(obj) for name, fn in kind.indexes.items()}}
    if kind.status_facts:
        seen["facts"] = kind.status_facts(obj)
    return seen


def test_every_list_reads_the_same_of_a_slim_record_as_of_the_whole_object():
    checked = set()
    for name, obj in _objects():
        kind = kinds.get(name)
        record = slim.pooled(slim.slim(kind, copy.deepcopy(obj)))
        assert _seen(kind, record) == _seen(kind, obj), name
        checked.add(name)
    assert checked == {"pod"} | set(PLURALS.values())


def test_slim_records_leave_out_what_no_list_reads():
    by_kind = {}
    for name, obj in _objects():
        by_kind.setdefault(name, slim.slim(kinds.get(name), copy.deepcopy(obj)))
    rs, node, event = by_kind["replicaset"], by_kind["node"], by_kind["event"]
    assert set(rs["spec"]["template"]) == {"spec"}
    assert all(set(c) == {"name", "image"} for c in rs["spec"]["template"]["spec"]["containers"])
    assert "images" not in node["status"] and "addresses" not in node["status"]
    assert all(set(c) == {"type", "status"} for c in node["status"]["conditions"])
    assert "reportingComponent" not in event
    assert "resourceVersion" not in event["involvedObject"]
    pod = by_kind["pod"]
    assert all(set(cs["state"]) <= {"running", "waiting", "terminated"}
               and not any(set(s) & {"startedAt", "finishedAt", "message"}
                           for s in cs["state"].values())
               for cs in pod["status"]["containerStatuses"])
    assert joins.controller(pod)


def _template(image, hash_label):
    return {"metadata": {"labels": {"app": "a", "pod-template-hash": hash_label}},
            "spec": {"containers": [{"name": "c", "image": image, "args": ["--x"],
                                     "env": [{"name": "K", "value": "v"}]}]}}


def test_the_new_replica_set_is_found_by_the_fingerprint_of_its_template():
    deployment = {"metadata": {"uid": "d"}, "spec": {"template": {
        "spec": {"containers": [{"env": [{"value": "v", "name": "K"}], "args": ["--x"],
                                 "image": "i:2", "name": "c"}]},
        "metadata": {"labels": {"app": "a"}}}}}
    sets = [{"metadata": {"name": "old", "creationTimestamp": "2024-01-01T00:00:00Z"},
             "spec": {"replicas": 0, "template": _template("i:1", "h1")}},
            {"metadata": {"name": "new", "creationTimestamp": "2024-01-02T00:00:00Z"},
             "spec": {"replicas": 2, "template": _template("i:2", "h2")}}]
    kind = kinds.get("replicaset")
    records = [slim.pooled(slim.slim(kind, copy.deepcopy(rs))) for rs in sets]
    assert "env" not in json.dumps(records) and "--x" not in json.dumps(records)
    assert records[1]["spec"]["templateDigest"] == workloads.template_digest(
        deployment["spec"]["template"])
    assert workloads.new_replica_set(deployment, records) is records[1]
    assert workloads.new_replica_set(deployment, sets) is sets[1]   # whole objects too
    changed = copy.deepcopy(deployment)
    changed["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] = "w"
    assert workloads.new_replica_set(changed, records) is None


def test_the_tables_say_how_full_they_are(monkeypatch):
    """The soak's memory report counts the bounded tables a soak fills (cache/watchcache.py's
    SIGUSR1 test hook): what a soaked gateway holds beyond a fresh one may be theirs."""
    for name in ("_pool", "_keys", "_labels", "_texts"):
        monkeypatch.setattr(slim, name, {})
    assert {key: value for key, value in slim.tables().items() if key != "layouts"} == {
        "pool_entries": 0, "label_maps": 0, "texts": 0}
    slim.pooled({"metadata": {"name": "p-1", "labels": {"app": "web"}},
                 "spec": {"nodeName": "node-1"}})
    slim.text_pool()("Running", "Running")
    tables = slim.tables()
    assert tables["label_maps"] == 1 and tables["texts"] == 1
    assert tables["pool_entries"] >= 2 and tables["layouts"] >= 2   # node-1; the spec's map


def _fresh(text):
    """A new string equal to ``text`` (as a decoder makes one for each object)."""
    return json.loads(json.dumps(text))


def test_a_full_pool_keeps_the_strings_two_records_hold():
    """Issue #41: a full pool starts again with the strings records share, not empty. A string
    held by two references beyond the pool's stays, one held once goes; objects start again,
    however many hold them (their entries cost their JSON)."""
    pool, holders = {}, []
    for count in (0, 1, 2, 3):
        text = _fresh("value-%d" % count)
        pool[text] = text
        holders += [[text] for _ in range(count)]
    obj = {"n": 1}
    pool[json.dumps(obj).encode()] = obj
    holders += [[obj] for _ in range(20)]
    assert set(slim._next_generation(pool)) == {"value-2", "value-3"}


def test_a_full_pool_keeps_at_most_keep_most_strings_the_most_held(monkeypatch):
    monkeypatch.setattr(slim, "KEEP_MOST", 3)
    pool, holders = {}, []
    for name, count in (("a", 2), ("b", 2), ("c", 2), ("d", 2), ("e", 9), ("f", 7)):
        text = _fresh("value-" + name)   # the most held made last: kept all the same
        pool[text] = text
        holders += [[text] for _ in range(count)]
    kept = slim._next_generation(pool)
    assert len(kept) == 3 and {"value-e", "value-f"} < set(kept)
    monkeypatch.setattr(slim, "KEEP_MOST", 2)
    assert set(slim._next_generation(pool)) == {"value-e", "value-f"}


def test_records_made_after_a_pool_restarts_share_what_earlier_records_share(monkeypatch):
    """Under churn a pool restarts every few seconds: a namespace's name, met in every record,
    stays one copy across restarts. Emptied at each restart instead (as before issue #41), each
    restart gave the records made after it their own copy."""
    monkeypatch.setattr(slim, "POOL_SIZE", 16)
    monkeypatch.setattr(slim, "KEEP_MOST", 4)

    def copies(next_generation):
        monkeypatch.setattr(slim, "_next_generation", next_generation)
        monkeypatch.setattr(slim, "_pool", {})
        monkeypatch.setattr(slim, "_keys", {})
        records = [slim.pooled(json.loads(json.dumps(
            {"metadata": {"namespace": "team-a", "name": "p-%d" % i},
             "spec": {"nodeName": "node-%d" % i, "image": "image-%d" % i}}))) for i in range(300)]
        return len({id(record["metadata"]["namespace"]) for record in records})

    assert copies(slim._next_generation) == 1
    assert copies(lambda pool: {}) > 10   # emptied: a copy a restart
