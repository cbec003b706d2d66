"""Per-token clients: --cache-enabled, and the client-side rate limit toward the API server."""

import signal
import time

from tests.gateway.helpers import assert_error, full_log


def test_cache_keeps_identities_apart(start_gateway, cluster, admin_token, norights_token):
    gw = start_gateway("--cache-enabled", "--cache-size", "2", "--cache-ttl", "1s",
                       "-v", "debug")
    for _ in range(2):
        assert gw.get("/api/v1/me", token=admin_token).json() == {"authenticated": True}
        assert_error(gw.request("PUT", "/settings", token=norights_token, body={}), 403,
                     "Forbidden", ['User "nobody"'])
        assert_error(gw.get("/api/v1/me", token="wrong"), 401)
        # The same token impersonating someone else is another client.
        impersonated = gw.request("PUT", "/settings", token=admin_token, body={},
                                  headers={"Impersonate-User": "nobody"})
        assert_error(impersonated, 403, "Forbidden", ['User "nobody"'])
        assert gw.get("/api/v1/me", token=admin_token).json() == {"authenticated": True}
    time.sleep(1.1)  # past the TTL: clients are made again, and still right
    assert gw.get("/api/v1/me", token=admin_token).status == 200
    log = full_log(gw)
    assert "new cluster client for key" in log
    for token in (admin_token, norights_token, "wrong"):
        assert token not in log


def timed_me_calls(gw, token, count):
    started = time.monotonic()
    for _ in range(count):
        assert gw.get("/api/v1/me", token=token).status == 200
    return time.monotonic() - started


def test_client_side_rate_limit(start_gateway, gateway, admin_token):
    # Each /me is one API server call; 1 at once and 2 a second means 6 calls take >= 2.5 s.
    # No watch cache: its start-up calls (discovery, ~20 at 2 a second) would take the
    # budget the timed calls are measured against.
    limited = start_gateway("--api-qps", "2", "--api-burst", "1", "--watch-cache=false")
    timed_me_calls(limited, admin_token, 1)
    time.sleep(1)
    assert timed_me_calls(limited, admin_token, 6) >= 2.4
    assert timed_me_calls(gateway, admin_token, 6) < 2.0


def test_a_signal_while_the_cluster_starts_stops_the_gateway_at_once(start_gateway):
    """At one API call a second the default cluster's start (discovery, then each kind's
    watch) takes over 20 s; a SIGTERM meanwhile stops the gateway now, not after the start
    (it waited for it, holding a pod's termination for as long)."""
    gw = start_gateway("--api-qps", "1", "--api-burst", "1")
    signalled = time.monotonic()
    gw.proc.send_signal(signal.SIGTERM)
    gw.proc.wait(10)
    assert time.monotonic() - signalled < 5
    log = full_log(gw)
    assert "stopping (SIGTERM)" in log and "cache of pod: synced" not in log
