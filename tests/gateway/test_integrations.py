"""The sidecar integration: health and state routes, periodic health checks.

The healthy case needs something answering GET /healthz like the sidecar does: a small HTTP
server in this process stands in for it, and can be switched to failing.
"""

import http.server
import threading
import time

import pytest

from tests.cluster.procs import free_ports
from tests.gateway.helpers import assert_error, metric_value
from tests.support.waiting import wait_for


class FakeSidecar:
    def __init__(self):
        self.healthy = True
        self.checks = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/healthz":
                    owner.checks += 1
                code = 200 if owner.healthy else 500
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def sidecar():
    fake = FakeSidecar()
    yield fake
    fake.stop()


def health(gw, token):
    return gw.get("/api/v1/integration/sidecar/health", token=token)


def wait_for_health(gw, token, status, timeout=5):
    def answered():
        reply = health(gw, token)
        return reply if reply.status == status else None
    return wait_for(answered, timeout, 0.1, "sidecar health %d" % status)


def proxy_calls(cluster):
    """Service proxy requests the API server has served (its own /metrics)."""
    status, text = cluster.request("GET", "/metrics", raw=True)
    assert status == 200
    return metric_value(text.decode(), "apiserver_request_total", resource="services",
                        subresource="proxy")


def test_healthy_sidecar_and_periodic_checks(start_gateway, sidecar, admin_token):
    gw = start_gateway("--sidecar-host", sidecar.url, "--metric-client-check-period", "0.5s")
    reply = health(gw, admin_token)
    assert reply.status == 200
    assert reply.json() == {"healthy": True, "message": "the metrics sidecar is healthy"}
    state = gw.get("/api/v1/integration/sidecar/state").json()
    assert state["connected"] is True and state["error"] is None
    assert time.strptime(state["lastChecked"], "%Y-%m-%dT%H:%M:%SZ")
    seen = sidecar.checks
    time.sleep(1.6)
    assert sidecar.checks - seen >= 2  # checked every period without being asked

    sidecar.healthy = False  # seen at the next periodic check
    reply = wait_for_health(gw, admin_token, 503)
    # The integration health record, which is also the specification's 503 error body.
    assert reply.json() == {"healthy": False, "message": "health check answered 500",
                            "status": "Failure", "code": 503}
    assert gw.get("/api/v1/integration/sidecar/state").json()["connected"] is False
    sidecar.healthy = True
    wait_for_health(gw, admin_token, 200)


def test_requests_read_the_last_periodic_check_and_never_check_themselves(
        start_gateway, sidecar, admin_token):
    gw = start_gateway("--sidecar-host", sidecar.url, "--metric-client-check-period", "60s")
    first = gw.get("/api/v1/integration/sidecar/state").json()
    assert first["connected"] is True
    for _ in range(5):
        assert gw.get("/api/v1/integration/sidecar/state").json() == first
        assert health(gw, admin_token).status == 200
        assert health(gw, "x").status == 200  # any well-formed Bearer header: no check either
    assert sidecar.checks == 1  # the start-up check only


def test_token_free_state_makes_no_service_identity_calls(start_gateway, cluster, admin_token):
    # Through the service proxy the check runs as the gateway's own identity.
    gw = start_gateway("--metric-client-check-period", "60s")
    assert gw.get("/api/v1/integration/sidecar/state").json()["lastChecked"]
    before = proxy_calls(cluster)
    assert before >= 1  # this gateway's start-up check at least
    for _ in range(5):
        assert gw.get("/api/v1/integration/sidecar/state").status == 200
        assert health(gw, admin_token).status == 503
    # Other gateways of the session check every 30 s: one of theirs may land in between.
    assert proxy_calls(cluster) - before <= 1


def test_unreachable_sidecar_is_503_with_the_health_record(start_gateway, admin_token):
    gw = start_gateway("--sidecar-host", "http://127.0.0.1:%d" % free_ports(1)[0])
    reply = health(gw, admin_token)
    assert reply.status == 503
    body = reply.json()
    assert set(body) == {"healthy", "message", "status", "code"}  # no reason, as the spec says
    assert body["healthy"] is False
    assert body["status"] == "Failure" and body["code"] == 503
    assert "unreachable" in body["message"] and "Traceback" not in body["message"]
    state = gw.get("/api/v1/integration/sidecar/state").json()
    assert state["connected"] is False and "unreachable" in state["error"]


def test_sidecar_through_the_service_proxy(gateway, admin_token):
    # No --sidecar-host: the service proxy to a service that does not exist in this cluster.
    reply = health(gateway, admin_token)
    assert reply.status == 503
    assert set(reply.json()) == {"healthy", "message", "status", "code"}
    assert reply.json()["healthy"] is False and reply.json()["message"]


def test_health_needs_a_token_and_a_known_integration(gateway, admin_token):
    assert_error(health(gateway, None), 401, "Unauthorized")
    assert_error(gateway.get("/api/v1/integration/heapster/health", token=admin_token), 404,
                 "NotFound", ["heapster"])
    assert_error(gateway.get("/api/v1/integration/heapster/state"), 404, "NotFound")


@pytest.mark.parametrize("flags, kw", [(("--metrics-provider", "none"), {}),
                                       (("--proxy",), {"kubeconfig": False})])
def test_disabled_integration(start_gateway, sidecar, admin_token, flags, kw):
    gw = start_gateway("--sidecar-host", sidecar.url, *flags, **kw)
    assert_error(health(gw, admin_token), 404, "NotFound", ["not enabled"])
    time.sleep(0.3)
    assert sidecar.checks == 0
