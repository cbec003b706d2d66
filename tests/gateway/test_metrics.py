"""/metrics counts the requests served: counter, latency histogram, one-hour summary."""

import secrets

from tests.gateway.helpers import metric_value


def scrape(gw):
    reply = gw.get("/metrics")
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("text/plain")
    return reply.data.decode()


def test_metrics_count_the_requests_made(gateway, admin_token):
    agent = "metrics-test/" + secrets.token_hex(4)
    ua = {"User-Agent": agent}
    before = scrape(gateway)
    for _ in range(3):
        assert gateway.get("/api/v1/systembanner", headers=ua).status == 200
    for _ in range(2):
        assert gateway.get("/api/v1/me", headers=ua).status == 401
    assert gateway.get("/api/v1/me", token=admin_token, headers=ua).status == 200
    after = scrape(gateway)

    json_type = "application/json; charset=UTF-8"
    assert metric_value(after, "apiserver_request_count", client=agent, verb="GET",
                        resource="systembanner", code=200, contentType=json_type) == 3
    assert metric_value(after, "apiserver_request_count", client=agent, verb="GET",
                        resource="me", code=401) == 2
    assert metric_value(after, "apiserver_request_count", client=agent, verb="GET",
                        resource="me", code=200) == 1

    def delta(name, **labels):
        return metric_value(after, name, **labels) - metric_value(before, name, **labels)

    banner = dict(verb="GET", resource="systembanner")
    assert delta("apiserver_request_latencies_count", **banner) == 3
    assert delta("apiserver_request_latencies_bucket", le="+Inf", **banner) == 3
    assert delta("apiserver_request_latencies_bucket", le="8e+06", **banner) == 3
    assert delta("apiserver_request_latencies_summary_count", **banner) == 3
    assert delta("apiserver_request_latencies_summary_count", verb="GET", resource="me") == 3
    median = metric_value(after, "apiserver_request_latencies_summary", quantile="0.5", **banner)
    assert 0 < median < 8_000_000  # microseconds


def test_exposition_shape(gateway):
    scrape(gateway)  # so that /metrics itself has been counted once
    text = scrape(gateway)
    assert "# TYPE apiserver_request_count counter" in text
    assert "# TYPE apiserver_request_latencies histogram" in text
    assert "# TYPE apiserver_request_latencies_summary summary" in text
    bounds = [line.split('le="')[1].split('"')[0] for line in text.splitlines()
              if line.startswith("apiserver_request_latencies_bucket{")
              and 'resource="metrics"' in line]
    assert bounds == ["125000.0", "250000.0", "500000.0", "1e+06", "2e+06", "4e+06", "8e+06",
                      "+Inf"]
    assert "process_resident_memory_bytes" in text
    # Unknown paths are not counted: random URLs must not grow the label set.
    gateway.get("/api/v1/no-such-thing-%s" % secrets.token_hex(4))
    assert "no-such-thing" not in scrape(gateway)


def test_client_label_is_bounded_against_random_user_agents(start_gateway):
    gw = start_gateway()
    for i in range(130):
        assert gw.get("/api/v1/systembanner", headers={"User-Agent": "ua-%d" % i}).status == 200
    text = scrape(gw)
    clients = {line.split('client="')[1].split('"')[0] for line in text.splitlines()
               if line.startswith("apiserver_request_count{")}
    assert len(clients) == 101 and "other" in clients
    assert "ua-129" not in clients
    assert metric_value(text, "apiserver_request_count", client="other",
                        resource="systembanner") >= 30
