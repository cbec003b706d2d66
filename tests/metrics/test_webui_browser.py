"""The pod list's CPU and memory cells in a real browser: headless chromium loads a pod list
page (tests/webui/page/pods.html, which fills its cells the way the upstream web UI's pod list
does: from each pod's metrics.cpuUsageHistory and memoryUsageHistory, "-" without them) from the
gateway's --web-root, against the real sidecar scraping the local cluster's metrics. With
--web-ui-compat the cells hold numbers; without the switch they show "-", as they did."""

import re

import pytest

from tests.support.gateway import Gateway

CORES = re.compile(r"^\d+(\.\d+)?(m|k|M|G)?$")
BYTES = re.compile(r"^\d+(\.\d+)?(Ki|Mi|Gi|Ti)?$")


@pytest.fixture(scope="module")
def gateways(cluster, sidecar, web_root):  # noqa: F811
    started = {}
    for name, flags in (("compat", ("--web-ui-compat",)), ("plain", ())):
        started[name] = Gateway.start(cluster, "--web-root", web_root, "--sidecar-host",
                                      sidecar.url, "--metric-client-check-period", "0.5s",
                                      *flags)
    yield started
    for gw in started.values():
        gw.stop()


def cells(page, gw, namespace, token):  # noqa: F811
    page.goto(gw.url + "/pods.html")
    count = page.evaluate("([ns, token]) => podlist.load(ns, token)", [namespace, token])
    rows = page.eval_on_selector_all(
        "#pods tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))")
    assert len(rows) == count
    return {name: (cpu, memory) for name, cpu, memory in rows}


def test_the_pod_lists_cpu_and_memory_cells_hold_numbers(page, gateways, metrics_ns,  # noqa: F811
                                                         admin_token):
    shown = cells(page, gateways["compat"], metrics_ns, admin_token)
    assert len(shown) == 5
    for name, (cpu, memory) in shown.items():
        assert CORES.match(cpu), (name, cpu)
        assert BYTES.match(memory), (name, memory)
    body = page.evaluate("podlist.body")
    assert all(p["metrics"]["memoryUsage"] > 0 for p in body["pods"])
    assert [c["metricName"] for c in body["cumulativeMetrics"]] == ["cpu/usage_rate",
                                                                    "memory/usage"]
    # Without the switch the specification's default stands: nothing attached, "-" shown.
    plain = cells(page, gateways["plain"], metrics_ns, admin_token)
    assert set(plain) == set(shown)
    assert set(plain.values()) == {("-", "-")}
