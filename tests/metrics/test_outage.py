"""The sidecar going away and coming back, and a metrics source that misbehaves."""

import secrets
import time

import urllib3

from tests.metrics.conftest import new_sidecar
from tests.metrics.sidecar import wait_points

CHECK = 1.0  # the gateway's --metric-client-check-period in these tests


def pod_list(gw, ns, token):
    reply = gw.get("/api/v1/pod/" + ns, token=token, params={"metricNames": "cpu/usage"})
    assert reply.status == 200, reply  # never fails because of metrics
    return reply.json()


def has_metrics(body):
    return all(p["metrics"] is not None and p["metrics"]["cpu/usage"]["dataPoints"]
               for p in body["pods"]) and "warning" not in body


def wait_list(gw, ns, token, predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = pod_list(gw, ns, token)
        if predicate(body):
            return body, timeout - (deadline - time.monotonic())
        time.sleep(0.1)
    raise AssertionError("%s within %ss: %r" % (what, timeout, body))


def test_stopping_and_restarting_the_sidecar(cluster, sidecar_token, state_dir, metrics_ns,
                                             start_gateway, admin_token):
    side = new_sidecar(cluster, sidecar_token, state_dir, "outage", resolution="1s",
                       duration="60s")
    side.start()
    try:
        wait_points(side, "/api/v1/pod/" + metrics_ns, 1)
        gw = start_gateway("--sidecar-host", side.url, "--metric-client-check-period",
                           "%gs" % CHECK)
        wait_list(gw, metrics_ns, admin_token, has_metrics, 10, "metrics")
        side.stop()
        stopped = time.monotonic()
        # A list asked before the next check finds the sidecar gone by itself; the check
        # turns metrics off within one period (plus a request's time). Lists stay 200s.
        body, _ = wait_list(gw, metrics_ns, admin_token, lambda b: "warning" in b,
                            CHECK + 2.5, "metrics off")
        while gw.get("/api/v1/integration/sidecar/health", token=admin_token).status != 503:
            assert time.monotonic() - stopped < CHECK + 2.5, "the check did not notice"
            time.sleep(0.1)
        down = gw.get("/api/v1/integration/sidecar/health", token=admin_token).json()
        assert down["healthy"] is False and "unreachable" in down["message"]
        body = pod_list(gw, metrics_ns, admin_token)
        assert all(p["metrics"] is None for p in body["pods"])
        assert body["cumulativeMetrics"] == [] and "sidecar" in body["warning"]
        detail = gw.get("/api/v1/pod/%s/solo" % metrics_ns, token=admin_token,
                        params={"metricNames": "cpu/usage"})
        assert detail.status == 200 and detail.json()["metrics"] is None
        assert "sidecar" in detail.json()["warning"]
        detail = gw.get("/api/v1/node/" + cluster.nodes[0], token=admin_token)
        assert detail.status == 200 and detail.json()["metrics"] == []  # upstream's default
        assert "sidecar" in detail.json()["warning"]
        side.start()  # same port; an in-memory database starts empty and scrapes at once
        wait_list(gw, metrics_ns, admin_token, has_metrics, CHECK + 5, "metrics back")
        up = gw.get("/api/v1/integration/sidecar/health", token=admin_token)
        assert up.status == 200 and up.json()["healthy"] is True
    finally:
        side.stop()


def set_fault(cluster, channel, mode):
    r = urllib3.PoolManager().request("PUT", "%s/faults/%s" % (cluster.metrics_url, channel),
                                      body=mode.encode())
    assert r.status == 200, r.data


def points(side, ns):
    status, body = side.get("/api/v1/pod/%s/solo" % ns, metricNames="cpu/usage")
    assert status == 200
    return body["items"][0]["dataPoints"]


def test_garbage_and_403_keep_the_sidecar_serving_what_it_has(cluster, sidecar_token,
                                                              state_dir, metrics_ns):
    channel = "t" + secrets.token_hex(4)
    side = new_sidecar(cluster, sidecar_token, state_dir, channel, channel=channel,
                       resolution="1s", duration="60s")
    side.start()
    try:
        wait_points(side, "/api/v1/pod/%s/solo" % metrics_ns, 2)
        for mode, text in (("garbage", "not JSON"), ("forbidden", "403")):
            set_fault(cluster, channel, mode)
            before = side.get("/healthz")[1]["failures"]
            deadline = time.monotonic() + 10
            while side.get("/healthz")[1]["failures"] < before + 2:
                assert time.monotonic() < deadline, side.log()
                time.sleep(0.2)
            kept = points(side, metrics_ns)
            time.sleep(1.5)  # more failed scrapes: nothing is added, nothing is lost
            assert side.alive(), side.log()
            health = side.get("/healthz")[1]
            assert text in health["lastError"], health
            assert points(side, metrics_ns) == kept and len(kept) >= 2
        set_fault(cluster, channel, "normal")
        wait_points(side, "/api/v1/pod/%s/solo" % metrics_ns, len(kept) + 2, timeout=15)
        assert side.get("/healthz")[1]["lastError"] is None
    finally:
        side.stop()
        set_fault(cluster, channel, "normal")
