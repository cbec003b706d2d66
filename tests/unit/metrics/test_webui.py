"""Upstream's metric shapes for the web UI (dashboard_api/metrics/webui.py) and the short-lived
sharing of sidecar answers."""

import asyncio

import pytest

from dashboard_api.metrics import webui

T0 = 1_700_000_000_000          # ms
CPU = {T0: 12_400_000, T0 + 60_000: 250_600_000}        # nanocores
MEM = {T0: 1024, T0 + 60_000: 4096}                     # bytes


def test_pod_metrics_in_millicores_and_bytes_with_histories():
    got = webui.pod_metrics(CPU, MEM)
    assert got == {
        "cpuUsage": 251, "memoryUsage": 4096,    # the last point's value
        "cpuUsageHistory": [{"timestamp": "2023-11-14T22:13:20Z", "value": 12},
                            {"timestamp": "2023-11-14T22:14:20Z", "value": 251}],
        "memoryUsageHistory": [{"timestamp": "2023-11-14T22:13:20Z", "value": 1024},
                               {"timestamp": "2023-11-14T22:14:20Z", "value": 4096}],
    }
    # The last point is the latest one, whatever the order of the series.
    assert webui.pod_metrics(dict(reversed(list(CPU.items()))), {})["cpuUsage"] == 251
    # A metric without points is null; no points at all: no metrics.
    assert webui.pod_metrics(CPU, {})["memoryUsage"] is None
    assert webui.pod_metrics(CPU, None)["memoryUsageHistory"] is None
    assert webui.pod_metrics({}, {}) is None and webui.pod_metrics(None, None) is None


def test_cumulative_metrics_in_upstreams_shape():
    one = webui.cumulative(webui.CPU, [CPU, {}, None])
    assert one == {
        "dataPoints": [{"x": T0 // 1000, "y": 12}, {"x": T0 // 1000 + 60, "y": 251}],
        "metricPoints": [{"timestamp": "2023-11-14T22:13:20Z", "value": 12},
                         {"timestamp": "2023-11-14T22:14:20Z", "value": 251}],
        "metricName": "cpu/usage_rate", "aggregation": "sum"}
    # Two resources: summed per x; metricPoints only when exactly one contributed.
    two = webui.cumulative(webui.MEMORY, [MEM, {T0: 1, T0 + 120_000: 7}])
    assert two["dataPoints"] == [{"x": T0 // 1000, "y": 1025}, {"x": T0 // 1000 + 60, "y": 4096},
                                 {"x": T0 // 1000 + 120, "y": 7}]
    assert two["metricPoints"] == [] and two["metricName"] == "memory/usage"
    assert webui.cumulative(webui.CPU, [{}, {}])["dataPoints"] == []


def test_attach_puts_pod_metrics_on_pods_only_and_both_cumulative_metrics():
    pod, deployment = {"objectMeta": {}, "metrics": None}, {"objectMeta": {}}
    envelope = {"cumulativeMetrics": []}
    webui.attach([pod, deployment], [{webui.CPU: CPU, webui.MEMORY: MEM}, {webui.CPU: {}}],
                 envelope)
    assert pod["metrics"]["cpuUsage"] == 251 and "metrics" not in deployment
    assert [(m["metricName"], m["aggregation"]) for m in envelope["cumulativeMetrics"]] == [
        ("cpu/usage_rate", "sum"), ("memory/usage", "sum")]
    assert envelope["cumulativeMetrics"][1]["dataPoints"][-1]["y"] == 4096


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_shared_answers_share_within_the_ttl_and_concurrently():
    clock, calls = Clock(), []

    async def ask(path):
        calls.append(path)
        await asyncio.sleep(0.01)
        return {"answer": path, "n": len(calls)}

    async def scenario():
        shared = webui.SharedAnswers(ttl=5, size=2, clock=clock)
        # Concurrent identical requests: one call.
        a, b = await asyncio.gather(shared.get("/p", ask), shared.get("/p", ask))
        assert a == b == {"answer": "/p", "n": 1} and calls == ["/p"]
        clock.now += 4.9
        assert (await shared.get("/p", ask))["n"] == 1          # still shared
        clock.now += 0.2
        assert (await shared.get("/p", ask))["n"] == 2          # expired: asked again
        # Bounded: the least recently used answer goes first.
        await shared.get("/q", ask)
        await shared.get("/r", ask)
        assert len(shared) == 2
        await shared.get("/p", ask)
        assert calls == ["/p", "/p", "/q", "/r", "/p"]
        assert (shared.asked, shared.shared) == (5, 2)
        # Expired answers go as soon as another request is made.
        clock.now += 6
        await shared.get("/s", ask)
        assert len(shared) == 1

    run(scenario())


def test_shared_answers_never_keep_a_failure():
    clock, calls = Clock(), []

    async def ask(path):
        calls.append(path)
        if len(calls) == 1:
            raise RuntimeError("sidecar down")
        return "ok"

    async def scenario():
        shared = webui.SharedAnswers(clock=clock)
        with pytest.raises(RuntimeError):
            await shared.get("/p", ask)
        assert await shared.get("/p", ask) == "ok"
        assert len(calls) == 2

    run(scenario())
