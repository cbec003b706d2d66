"""Upstream's standard metrics for the upstream web UI (--web-ui-compat), end to end: the real
API server, the metrics stand-in, the real sidecar and the gateway, with a counting relay
between the gateway and the sidecar to see what the gateway asks and how often. Lists asked
for as the UI asks (no metricNames) carry upstream's PodMetrics and cumulativeMetrics; without
the switch nothing is asked and nothing attached; metricNames keeps the specification's shapes
either way."""

import datetime
import http.server
import threading
import urllib.parse

import pytest
import urllib3

from tests.cluster.procs import free_ports
from tests.gateway.helpers import assert_error
from tests.metrics.sidecar import by_uid, series
from tests.support.gateway import Gateway

UI_QUERY = {"itemsPerPage": "10", "page": "1", "sortBy": "d,creationTimestamp"}


class CountingRelay:
    """Forwards GETs to the sidecar and records their paths."""

    def __init__(self, target):
        self.paths = []
        http_pool = urllib3.PoolManager(retries=False, timeout=10)
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.paths.append(urllib.parse.unquote(self.path))
                r = http_pool.request("GET", target + self.path)
                self.send_response(r.status)
                self.send_header("Content-Length", str(len(r.data)))
                self.end_headers()
                self.wfile.write(r.data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def metric_paths(self):
        return [p for p in self.paths if "/metrics/" in p]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture(scope="module")
def relay(sidecar):
    r = CountingRelay(sidecar.url)
    yield r
    r.stop()


@pytest.fixture(scope="module")
def ui_gateway(cluster, relay):
    gw = Gateway.start(cluster, "--sidecar-host", relay.url, "--web-ui-compat",
                       "--metric-client-check-period", "0.5s")
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def plain_gateway(cluster, relay):
    gw = Gateway.start(cluster, "--sidecar-host", relay.url,
                       "--metric-client-check-period", "0.5s")
    yield gw
    gw.stop()


def listing(gw, path, token, **params):
    reply = gw.get(path, token=token, params=dict(UI_QUERY, **params))
    assert reply.status == 200, reply
    return reply.json()


def stored(sidecar, ns, pods, metric):
    status, body = sidecar.get("/api/v1/dashboard/namespaces/%s/pod-list/%s/metrics/%s"
                               % (ns, ",".join(pods), metric))
    assert status == 200, body
    return {uid: series(m) for uid, m in by_uid(body).items()}


def millicores(nanocores):
    return int(round(nanocores / 1e6))


def history_series(points):
    """{x ms: value} of upstream MetricPoints."""
    return {int(datetime.datetime.strptime(p["timestamp"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000): p["value"] for p in points}


def agree(mine, theirs):
    xs = set(mine) & set(theirs)
    assert len(xs) >= 2, (mine, theirs)
    assert {x: mine[x] for x in xs} == {x: theirs[x] for x in xs}


def test_pod_list_as_the_ui_asks_carries_pod_metrics(ui_gateway, relay, sidecar, metrics_ns,
                                                     admin_token, sidecar_token):
    before = len(relay.metric_paths())
    body = listing(ui_gateway, "/api/v1/pod/" + metrics_ns, admin_token)
    asked = relay.metric_paths()[before:]
    # Another caller within a few seconds shares those answers: no sidecar request (asked at
    # once: the checks below take seconds on a busy machine, and answers are shared for 5 s).
    again = listing(ui_gateway, "/api/v1/pod/" + metrics_ns, sidecar_token)
    assert relay.metric_paths()[before + len(asked):] == []
    pods = {p["objectMeta"]["name"]: p for p in body["pods"]}
    assert len(pods) == 5 and "warning" not in body
    # One sidecar request per namespace per metric for the page, never one per pod.
    assert sorted(p.split("/metrics/")[1] for p in asked) == ["cpu/usage", "memory/usage"]
    assert all(set(p.split("/pod-list/")[1].split("/")[0].split(",")) == set(pods)
               for p in asked)
    cpu = stored(sidecar, metrics_ns, sorted(pods), "cpu/usage")
    memory = stored(sidecar, metrics_ns, sorted(pods), "memory/usage")
    for name, pod in pods.items():
        m = pod["metrics"]
        assert set(m) == {"cpuUsage", "memoryUsage", "cpuUsageHistory", "memoryUsageHistory"}
        assert isinstance(m["cpuUsage"], int) and isinstance(m["memoryUsage"], int)
        assert m["memoryUsage"] > 0
        assert m["cpuUsage"] == m["cpuUsageHistory"][-1]["value"]
        assert m["memoryUsage"] == m["memoryUsageHistory"][-1]["value"]
        agree(history_series(m["cpuUsageHistory"]),
              {x: millicores(y) for x, y in cpu[name].items()})
        agree(history_series(m["memoryUsageHistory"]), memory[name])
    cumulative = body["cumulativeMetrics"]
    assert [(c["metricName"], c["aggregation"]) for c in cumulative] == [
        ("cpu/usage_rate", "sum"), ("memory/usage", "sum")]
    for c, kept, unit in ((cumulative[0], cpu, millicores), (cumulative[1], memory, int)):
        got = {p["x"]: p["y"] for p in c["dataPoints"]}
        per_x = {}
        for s in kept.values():
            for x, y in s.items():
                per_x[x // 1000] = per_x.get(x // 1000, 0) + y
        agree(got, {x: unit(y) for x, y in per_x.items()})   # x in Unix seconds
        assert c["metricPoints"] == []                          # several pods contributed
    assert [p["metrics"] for p in again["pods"]] == [p["metrics"] for p in body["pods"]]


def test_workload_and_node_lists_carry_cumulative_metrics(ui_gateway, metrics_ns, admin_token,
                                                          cluster):
    deployments = listing(ui_gateway, "/api/v1/deployment/" + metrics_ns, admin_token)
    [web] = deployments["deployments"]
    assert "metrics" not in web            # upstream: per-item metrics on pods only
    cpu, memory = deployments["cumulativeMetrics"]
    assert (cpu["metricName"], memory["metricName"]) == ("cpu/usage_rate", "memory/usage")
    assert len(cpu["dataPoints"]) >= 2 and all(p["y"] >= 0 for p in cpu["dataPoints"])
    # One deployment contributed: its points are there too, in time order.
    assert [p["value"] for p in memory["metricPoints"]] == [p["y"] for p in memory["dataPoints"]]
    assert all(p["y"] > 0 for p in memory["dataPoints"])
    sets = listing(ui_gateway, "/api/v1/replicaset/" + metrics_ns, admin_token)
    assert len(sets["cumulativeMetrics"]) == 2 and sets["cumulativeMetrics"][1]["dataPoints"]
    nodes = listing(ui_gateway, "/api/v1/node", admin_token)
    assert {n["objectMeta"]["name"] for n in nodes["nodes"]} == set(cluster.nodes)
    assert all("metrics" not in n for n in nodes["nodes"])
    assert [c["metricName"] for c in nodes["cumulativeMetrics"]] == ["cpu/usage_rate",
                                                                     "memory/usage"]
    assert nodes["cumulativeMetrics"][1]["dataPoints"]


def test_details_in_upstreams_units(ui_gateway, metrics_ns, admin_token):
    detail = ui_gateway.get("/api/v1/pod/%s/solo" % metrics_ns, token=admin_token)
    assert detail.status == 200
    cpu, memory = detail.json()["metrics"]
    assert (cpu["metricName"], memory["metricName"]) == ("cpu/usage_rate", "memory/usage")
    assert memory["dataPoints"] and memory["dataPoints"][0]["x"] < 10_000_000_000   # seconds
    assert [p["value"] for p in memory["metricPoints"]] == [p["y"] for p in memory["dataPoints"]]


def test_metric_names_keep_the_specifications_shapes_with_the_switch(ui_gateway, metrics_ns,
                                                                     admin_token):
    body = listing(ui_gateway, "/api/v1/pod/" + metrics_ns, admin_token,
                   metricNames="cpu/usage", aggregations="max")
    for pod in body["pods"]:
        assert set(pod["metrics"]) == {"cpu/usage"}
        assert pod["metrics"]["cpu/usage"]["label"]["pod"] == [pod["objectMeta"]["name"]]
    assert [(c["metricName"], c["aggregation"]) for c in body["cumulativeMetrics"]] == [
        ("cpu/usage", "max")]
    assert body["cumulativeMetrics"][0]["dataPoints"][0]["x"] > 10_000_000_000  # milliseconds


def test_without_the_switch_nothing_is_asked_or_attached(plain_gateway, relay, metrics_ns,
                                                         admin_token):
    before = len(relay.metric_paths())
    for path in ("/api/v1/pod/", "/api/v1/deployment/"):
        body = listing(plain_gateway, path + metrics_ns, admin_token)
        assert body["cumulativeMetrics"] == [] and "warning" not in body
    pods = listing(plain_gateway, "/api/v1/pod/" + metrics_ns, admin_token)["pods"]
    assert pods and all(p["metrics"] is None for p in pods)
    assert relay.metric_paths()[before:] == []


def test_a_sidecar_that_is_down_leaves_upstreams_empty_shapes(cluster, metrics_ns, admin_token):
    gw = Gateway.start(cluster, "--sidecar-host", "http://127.0.0.1:%d" % free_ports(1)[0],
                       "--web-ui-compat")
    try:
        body = listing(gw, "/api/v1/pod/" + metrics_ns, admin_token)
        assert body["pods"] and all(p["metrics"] is None for p in body["pods"])
        assert body["cumulativeMetrics"] == [] and "unreachable" in body["warning"]
        body = listing(gw, "/api/v1/deployment/" + metrics_ns, admin_token)
        assert body["cumulativeMetrics"] == [] and "metrics" not in body["deployments"][0]
    finally:
        gw.stop()


def test_refused_and_bad_requests_ask_the_sidecar_nothing(ui_gateway, relay, metrics_ns,
                                                           admin_token, norights_token):
    before = len(relay.metric_paths())
    path = "/api/v1/pod/" + metrics_ns
    unsigned = ui_gateway.get(path, params=UI_QUERY)
    assert (unsigned.status, unsigned.data) == (401, b"MSG_LOGIN_UNAUTHORIZED_ERROR")
    assert_error(ui_gateway.get(path, token=norights_token, params=UI_QUERY), 403, "Forbidden")
    assert_error(ui_gateway.get(path, token=admin_token,
                                params=dict(UI_QUERY, metricNames="cpu/median")), 400,
                 "BadRequest")
    assert relay.metric_paths()[before:] == []


def test_metrics_turned_off_leave_the_ui_lists_as_they_were(cluster, metrics_ns, admin_token):
    gw = Gateway.start(cluster, "--metrics-provider", "none", "--web-ui-compat")
    try:
        body = listing(gw, "/api/v1/pod/" + metrics_ns, admin_token)
        assert body["pods"] and all(p["metrics"] is None for p in body["pods"])
        assert body["cumulativeMetrics"] == [] and "warning" not in body
        # Asked for, the specification's answer: null metrics and why.
        body = listing(gw, "/api/v1/pod/" + metrics_ns, admin_token, metricNames="cpu/usage")
        assert "disabled" in body["warning"]
    finally:
        gw.stop()
