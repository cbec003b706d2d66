"""The sidecar against the real API server and the metrics stand-in: its scrape, its window and
its routes. Values are checked against what the stand-in reports (a known function of the
object's name and of time, tests/cluster/metrics_standin.py)."""

import sqlite3
import time

from tests.cluster import metrics_standin
from tests.metrics.sidecar import by_uid, series, wait_points

CPU_REQUESTS = {"app": 100_000_000, "side": 250_000_000}
MEMORY_LIMITS = {"app": 128 << 20, "side": 2 << 30}


def standin_values(key, x_ms):
    """The (cpu, memory) pairs the stand-in may have answered for a scrape at ``x_ms``: its
    values change every 10 s, and a scrape reads a moment after its own time stamp."""
    step = metrics_standin.sample_time(x_ms / 1000)
    return [metrics_standin.usage(key, t) for t in (step, step + metrics_standin.STEP_SECONDS)]


def test_points_accumulate_with_the_standins_values(sidecar, metrics_ns):
    path = "/api/v1/pod/%s/solo" % metrics_ns
    first = [p["x"] for p in wait_points(sidecar, path, 3)["items"][0]["dataPoints"]]
    deadline = time.monotonic() + 15
    while True:  # two more scrapes
        later = sidecar.get(path)[1]
        now = [p["x"] for p in later["items"][0]["dataPoints"]]
        if max(now) >= max(first) + 2000:
            break
        assert time.monotonic() < deadline, (first, now, sidecar.log())
        time.sleep(0.2)
    # New points are added; the earlier ones stay until they leave the window.
    assert len(now) >= 3 and {x for x in first if x >= min(now)} <= set(now), (first, now)
    cpu, memory = [by_uid({"items": [i for i in later["items"] if i["metricName"] == n]})["solo"]
                   for n in ("cpu/usage", "memory/usage")]
    xs = [p["x"] for p in cpu["dataPoints"]]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert all(isinstance(x, int) and x % 1000 == 0 for x in xs)
    assert cpu["label"] == {"namespace": [metrics_ns], "pod": ["solo"]}
    assert cpu["aggregation"] == "sum" and cpu["uids"] == ["solo"]
    keys = ["%s/solo/%s" % (metrics_ns, c) for c in ("app", "side")]
    for point, mem_point in zip(cpu["dataPoints"], memory["dataPoints"]):
        # A pod's value is the sum over its containers, in nanocores and bytes.
        candidates = [tuple(map(sum, zip(*pair))) for pair in zip(
            *(standin_values(k, point["x"]) for k in keys))]
        assert (point["y"], mem_point["y"]) in candidates, (point, mem_point, candidates)
    assert [p["value"] for p in cpu["metricPoints"]] == [p["y"] for p in cpu["dataPoints"]]
    assert cpu["metricPoints"][0]["timestamp"] == time.strftime(
        "%Y-%m-%dT%H:%M:%SZ", time.gmtime(xs[0] / 1000))


def test_one_container_and_the_requests_and_limits(sidecar, metrics_ns):
    body = wait_points(sidecar, "/api/v1/pod/%s/solo/side" % metrics_ns, 1,
                       metricNames="cpu/usage,cpu/request,memory/limit")
    items = {i["metricName"]: i for i in body["items"]}
    assert items["cpu/usage"]["label"]["container"] == ["side"]
    for p in items["cpu/usage"]["dataPoints"]:
        key = "%s/solo/side" % metrics_ns
        assert p["y"] in [cpu for cpu, _ in standin_values(key, p["x"])]
    assert set(series(items["cpu/request"]).values()) == {CPU_REQUESTS["side"]}  # 250000u
    assert set(series(items["memory/limit"]).values()) == {MEMORY_LIMITS["side"]}  # 2Gi
    whole = wait_points(sidecar, "/api/v1/pod/%s/solo" % metrics_ns, 1,
                        metricNames="cpu/request,memory/limit")
    whole = {i["metricName"]: i for i in whole["items"]}
    assert set(series(whole["cpu/request"]).values()) == {sum(CPU_REQUESTS.values())}
    assert set(series(whole["memory/limit"]).values()) == {sum(MEMORY_LIMITS.values())}


def common(*metrics):
    """The series of several Metric objects on the x values they all have."""
    xs = set.intersection(*(set(series(m)) for m in metrics))
    assert xs, metrics
    return [{x: series(m)[x] for x in xs} for m in metrics]


def test_the_three_route_forms_answer_the_same_stored_values(sidecar, metrics_ns, cluster):
    status, pods = cluster.request("GET", "/api/v1/namespaces/%s/pods" % metrics_ns,
                                   params={"labelSelector": "app=web"})
    web = sorted(p["metadata"]["name"] for p in pods["items"])
    names = ",".join(["solo"] + web)
    form1 = sidecar.get("/api/v1/dashboard/%s/pod/%s/metrics/cpu/usage" % (metrics_ns, names))
    form2 = sidecar.get("/api/v1/dashboard/namespaces/%s/pod-list/%s/metrics/cpu/usage_rate"
                        % (metrics_ns, names))
    form2_bare = sidecar.get("/api/v1/dashboard/namespaces/%s/pod-list/%s/metrics/cpu"
                             % (metrics_ns, names))
    form3 = {p: sidecar.get("/api/v1/pod/%s/%s" % (metrics_ns, p), metricNames="cpu/usage")
             for p in ["solo"] + web}
    for status, body in (form1, form2, form2_bare, *form3.values()):
        assert status == 200, body
    one, two, bare = by_uid(form1[1]), by_uid(form2[1]), by_uid(form2_bare[1])
    assert set(one) == set(two) == set(bare) == {"solo"} | set(web)
    assert two["solo"]["metricName"] == "cpu/usage_rate"  # named as asked
    for pod in ["solo"] + web:
        a, b, c, d = common(one[pod], two[pod], bare[pod], form3[pod][1]["items"][0])
        assert a == b == c == d

    nodes = sorted(cluster.nodes)
    n1 = sidecar.get("/api/v1/dashboard/node/%s/metrics/memory/usage" % ",".join(nodes))
    n2 = sidecar.get("/api/v1/dashboard/nodes/%s/metrics/memory" % ",".join(nodes))
    n3 = sidecar.get("/api/v1/node", metricNames="memory/usage")
    n3_one = sidecar.get("/api/v1/node/" + nodes[0])
    for status, body in (n1, n2, n3, n3_one):
        assert status == 200, body
    one, two, three = by_uid(n1[1]), by_uid(n2[1]), by_uid(n3[1])
    assert set(one) == set(two) == set(three) == set(nodes)
    for node in nodes:
        a, b, c = common(one[node], two[node], three[node])
        assert a == b == c
        assert one[node]["label"] == {"node": [node]}
    assert {i["metricName"] for i in n3_one[1]["items"]} == {"cpu/usage", "memory/usage"}
    assert {i["uids"][0] for i in n3_one[1]["items"]} == {nodes[0]}


def test_rows_older_than_the_duration_are_culled(sidecar, metrics_ns):
    # The fixture keeps 6 s at a 1 s resolution: after 8 s no point is older than the window,
    # in the answers and in the database file itself.
    wait_points(sidecar, "/api/v1/pod/%s/solo" % metrics_ns, 5)
    time.sleep(2)
    status, body = sidecar.get("/api/v1/pod/%s/solo" % metrics_ns)
    now = time.time()
    xs = [p["x"] / 1000 for p in body["items"][0]["dataPoints"]]
    assert 3 <= len(xs) <= 7, xs
    assert min(xs) > now - 6 - 2.5, (now, xs)
    db = sqlite3.connect("file:%s?mode=ro" % sidecar.db_file, uri=True)
    try:
        for table in ("pods", "nodes", "claims"):
            oldest, newest = db.execute("SELECT MIN(time), MAX(time) FROM %s" % table).fetchone()
            assert oldest is not None and newest - oldest <= 6, (table, oldest, newest)
            assert oldest > now - 6 - 2.5, (table, oldest, now)
    finally:
        db.close()


def test_batch_download_of_pods_nodes_and_claims(sidecar, metrics_ns, cluster):
    status, pod = cluster.request("GET", "/api/v1/namespaces/%s/pods/claimer" % metrics_ns)
    node = sorted(cluster.nodes)[0]
    selectors = [
        {"namespace": metrics_ns, "resourceType": "pod", "resourceName": "claimer",
         "uid": pod["metadata"]["uid"]},
        {"namespace": metrics_ns, "resourceType": "pod", "resourceName": "solo", "uid": "other"},
        {"namespace": "", "resourceType": "node", "resourceName": node, "uid": ""},
        {"namespace": metrics_ns, "resourceType": "persistentvolumeclaim",
         "resourceName": "data", "uid": ""},
    ]
    status, body = sidecar.post("/api/v1/download", {"selectors": selectors,
                                                     "metricNames": ["cpu/usage"]})
    assert status == 200, body
    got = {(i["selector"]["resourceType"], i["selector"]["resourceName"]): i
           for i in body["items"]}
    # solo's selector names another UID: it is not that pod.
    assert set(got) == {("pod", "claimer"), ("node", node), ("persistentvolumeclaim", "data")}
    assert got[("persistentvolumeclaim", "data")]["label"] == {
        "persistentvolumeclaim": ["data"], "namespace": [metrics_ns]}
    claimer = sidecar.get("/api/v1/pod/%s/claimer" % metrics_ns, metricNames="cpu/usage")[1]
    # The claim's series is its one pod's, on the scrapes both answers cover.
    a, b, c = common(got[("persistentvolumeclaim", "data")], got[("pod", "claimer")],
                     claimer["items"][0])
    assert a == b == c
    # A plain list of selectors works too, with the default metrics.
    status, body = sidecar.post("/api/v1/download", selectors[2:3])
    assert status == 200 and {i["metricName"] for i in body["items"]} == {"cpu/usage",
                                                                          "memory/usage"}


def test_bad_paths_names_and_bodies_are_clear_errors(sidecar, metrics_ns):
    for path, code, reason in [
            ("/api/v1/dashboard/namespaces/%s/pod-list/solo/metrics/disk/usage" % metrics_ns,
             400, "BadRequest"),
            ("/api/v1/dashboard/nodes/x/metrics/cpu/nonsense", 400, "BadRequest"),
            ("/api/v1/dashboard/%s/pod/,,/metrics/cpu" % metrics_ns, 400, "BadRequest"),
            ("/api/v1/nothing/here", 404, "NotFound"),
            ("/api/v1/dashboard/namespaces/%s/pod-list/solo" % metrics_ns, 404, "NotFound")]:
        status, body = sidecar.get(path)
        assert (status, body["code"], body["reason"], body["status"]) == (
            code, code, reason, "Failure"), (path, body)
        assert body["message"]
    status, body = sidecar.get("/api/v1/pod/%s" % metrics_ns, metricNames="cpu/usage,bogus")
    assert status == 400 and "bogus" in body["message"]
    for raw in (b"not json", b"{}", b'{"selectors": [{"resourceType": "service", '
                b'"resourceName": "x", "namespace": "a"}]}',
                b'{"selectors": [{"resourceType": "pod", "resourceName": "x"}]}',
                b'{"selectors": []}'):
        status, body = sidecar.post("/api/v1/download", None, raw=raw)
        assert status == 400 and body["reason"] == "BadRequest", (raw, body)
    # Unknown objects are simply absent (a pod with no data yet is not an error).
    status, body = sidecar.get("/api/v1/dashboard/namespaces/%s/pod-list/ghost/metrics/cpu"
                               % metrics_ns)
    assert status == 200 and body == {"items": []}
    status, body = sidecar.get("/healthz")
    assert status == 200 and body["status"] == "ok" and body["scrapes"] >= 3
