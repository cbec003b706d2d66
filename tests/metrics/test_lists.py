"""Metrics in the gateway's lists and details (metricNames, aggregations), end to end: the
real API server, the stand-in, the sidecar and the gateway. Expected values are computed here,
by hand, from what the sidecar has stored."""

import pytest

from tests.gateway.helpers import assert_error
from tests.metrics.sidecar import by_uid, series

AGGREGATIONS = ("sum", "avg", "min", "max")
FUNCTIONS = {"sum": sum, "min": min, "max": max, "avg": lambda v: sum(v) / len(v)}


def listing(gw, path, token, **params):
    reply = gw.get(path, token=token, params=dict({"itemsPerPage": "100"}, **params))
    assert reply.status == 200, reply
    return reply.json()


def stored_pods(sidecar, ns, pods, metric):
    status, body = sidecar.get("/api/v1/dashboard/namespaces/%s/pod-list/%s/metrics/%s"
                               % (ns, ",".join(pods), metric))
    assert status == 200, body
    return {uid: series(m) for uid, m in by_uid(body).items()}


def agree(mine, stored):
    """``mine`` (the gateway's {x: y}) equals ``stored`` on the x values both have, and they
    share at least two (the gateway's request and ours see almost the same window)."""
    xs = set(mine) & set(stored)
    assert len(xs) >= 2, (mine, stored)
    assert {x: mine[x] for x in xs} == {x: stored[x] for x in xs}


def test_pod_list_items_and_every_aggregation(metrics_gateway, sidecar, metrics_ns,
                                              admin_token):
    body = listing(metrics_gateway, "/api/v1/pod/" + metrics_ns, admin_token,
                   metricNames="cpu/usage,memory/usage", aggregations="sum,avg,min,max")
    pods = {p["objectMeta"]["name"]: p for p in body["pods"]}
    assert len(pods) == 5 and "warning" not in body
    for name in ("cpu/usage", "memory/usage"):
        stored = stored_pods(sidecar, metrics_ns, sorted(pods), name)
        for pod, item in pods.items():
            m = item["metrics"][name]
            assert m["metricName"] == name and m["aggregation"] == "sum"
            assert m["label"] == {"namespace": [metrics_ns], "pod": [pod]}
            agree(series(m), stored[pod])
    # One cumulative entry per (name x aggregation), computed here from the items' series.
    cumulative = body["cumulativeMetrics"]
    assert [(c["metricName"], c["aggregation"]) for c in cumulative] == [
        (n, a) for n in ("cpu/usage", "memory/usage") for a in AGGREGATIONS]
    for c in cumulative:
        per_x = {}
        for item in pods.values():
            for x, y in series(item["metrics"][c["metricName"]]).items():
                per_x.setdefault(x, []).append(y)
        expected = {x: FUNCTIONS[c["aggregation"]](ys) for x, ys in per_x.items()}
        assert series(c) == pytest.approx(expected), c["aggregation"]
        assert len(expected) >= 2
        assert [p["x"] for p in c["dataPoints"]] == sorted(expected)
        assert c["label"]["pod"] == [p["objectMeta"]["name"] for p in body["pods"]]
    # Without metricNames nothing is asked and nothing attached.
    plain = listing(metrics_gateway, "/api/v1/pod/" + metrics_ns, admin_token)
    assert plain["cumulativeMetrics"] == [] and all(p["metrics"] is None for p in plain["pods"])


def test_workloads_sum_their_own_pods(metrics_gateway, sidecar, metrics_ns, admin_token,
                                      cluster):
    status, pods = cluster.request("GET", "/api/v1/namespaces/%s/pods" % metrics_ns)
    owned = {}
    for p in pods["items"]:
        for ref in p["metadata"].get("ownerReferences") or ():
            owned.setdefault(ref["name"], []).append(p["metadata"]["name"])
    stored = stored_pods(sidecar, metrics_ns, [p["metadata"]["name"] for p in pods["items"]],
                         "cpu/usage")
    web_rs = next(name for name in owned if name.startswith("web-"))

    def total(names):
        xs = set.intersection(*(set(stored[n]) for n in names))
        return {x: sum(stored[n][x] for n in names) for x in xs}

    deployments = listing(metrics_gateway, "/api/v1/deployment/" + metrics_ns, admin_token,
                          metricNames="cpu/usage", aggregations="max")
    [web] = deployments["deployments"]
    assert sorted(web["metrics"]["cpu/usage"]["label"]["pod"]) == sorted(owned[web_rs])
    agree(series(web["metrics"]["cpu/usage"]), total(owned[web_rs]))
    assert series(deployments["cumulativeMetrics"][0]) == series(web["metrics"]["cpu/usage"])

    sets = listing(metrics_gateway, "/api/v1/replicaset/" + metrics_ns, admin_token,
                   metricNames="cpu/usage", aggregations="min")
    items = {i["objectMeta"]["name"]: i for i in sets["replicaSets"]}
    assert set(items) == {"rs", web_rs}
    agree(series(items["rs"]["metrics"]["cpu/usage"]), total(owned["rs"]))
    agree(series(items[web_rs]["metrics"]["cpu/usage"]), total(owned[web_rs]))
    both = [series(i["metrics"]["cpu/usage"]) for i in items.values()]
    xs = set(both[0]) & set(both[1])
    assert {x: min(s[x] for s in both) for x in xs} == \
        {x: y for x, y in series(sets["cumulativeMetrics"][0]).items() if x in xs}


def test_node_list_and_details(metrics_gateway, sidecar, metrics_ns, admin_token, cluster):
    body = listing(metrics_gateway, "/api/v1/node", admin_token, metricNames="memory/usage")
    status, stored = sidecar.get("/api/v1/node", metricNames="memory/usage")
    stored = {uid: series(m) for uid, m in by_uid(stored).items()}
    assert {n["objectMeta"]["name"] for n in body["nodes"]} == set(cluster.nodes)
    for node in body["nodes"]:
        name = node["objectMeta"]["name"]
        assert node["metrics"]["memory/usage"]["label"] == {"node": [name]}
        agree(series(node["metrics"]["memory/usage"]), stored[name])

    node = sorted(cluster.nodes)[0]
    reply = metrics_gateway.get("/api/v1/node/" + node, token=admin_token)
    assert reply.status == 200
    metrics = reply.json()["metrics"]
    assert [m["metricName"] for m in metrics] == ["cpu/usage", "memory/usage"]
    agree(series(metrics[1]), stored[node])

    reply = metrics_gateway.get("/api/v1/pod/%s/solo" % metrics_ns, token=admin_token,
                                params={"metricNames": "cpu/request,cpu/usage_rate"})
    assert reply.status == 200
    request, usage = reply.json()["metrics"]
    assert request["metricName"] == "cpu/request"
    assert set(series(request).values()) == {350_000_000}   # 100m + 250000u
    assert usage["metricName"] == "cpu/usage_rate"           # the upstream UI's name
    agree(series(usage), stored_pods(sidecar, metrics_ns, ["solo"], "cpu/usage")["solo"])


def test_upstream_ui_names_in_lists(metrics_gateway, metrics_ns, admin_token):
    body = listing(metrics_gateway, "/api/v1/pod/" + metrics_ns, admin_token,
                   metricNames="cpu/usage_rate,cpu/usage")
    for pod in body["pods"]:
        assert series(pod["metrics"]["cpu/usage_rate"]) == series(pod["metrics"]["cpu/usage"])
    assert [c["metricName"] for c in body["cumulativeMetrics"]] == ["cpu/usage_rate",
                                                                    "cpu/usage"]


def test_bad_metric_parameters_and_rights(metrics_gateway, metrics_ns, admin_token,
                                          norights_token):
    path = "/api/v1/pod/" + metrics_ns
    for params in ({"metricNames": "cpu/usage", "aggregations": "median"},
                   {"metricNames": "disk/usage"}, {"aggregations": "sum,"}):
        reply = metrics_gateway.get(path, token=admin_token, params=params)
        if params == {"aggregations": "sum,"}:
            assert reply.status == 200  # an empty entry is no name
            continue
        assert_error(reply, 400, "BadRequest")
    assert_error(metrics_gateway.get(path, params={"metricNames": "cpu/usage"}), 401,
                 "Unauthorized")
    reply = metrics_gateway.get(path, token=norights_token, params={"metricNames": "cpu/usage"})
    assert_error(reply, 403, "Forbidden")
    reply = metrics_gateway.get(path + "/ghost", token=admin_token,
                                params={"metricNames": "cpu/usage"})
    assert_error(reply, 404, "NotFound")


def test_metrics_provider_none_answers_without_metrics(start_gateway, metrics_ns, admin_token):
    gw = start_gateway("--metrics-provider", "none")
    body = listing(gw, "/api/v1/pod/" + metrics_ns, admin_token, metricNames="cpu/usage")
    assert body["pods"] and all(p["metrics"] is None for p in body["pods"])
    assert body["cumulativeMetrics"] == [] and "disabled" in body["warning"]
    detail = gw.get("/api/v1/pod/%s/solo" % metrics_ns, token=admin_token).json()
    assert detail["metrics"] == [] and "warning" not in detail
