"""The request series of /metrics: count, latency histogram and latency summary."""

import prometheus_client

# 125 ms doubling to 8 s, in microseconds.
LATENCY_BUCKETS = tuple(125_000 * 2 ** k for k in range(7))


class Telemetry:
    def __init__(self, registry=None):
        self.registry = registry or prometheus_client.CollectorRegistry()
        self.count = prometheus_client.Counter(
            "apiserver_request_count",
            "Requests served, by verb, resource, client, response content type and code.",
            ["verb", "resource", "client", "contentType", "code"], registry=self.registry)
        self.latency = prometheus_client.Histogram(
            "apiserver_request_latencies", "Response latency in microseconds.",
            ["verb", "resource"], buckets=LATENCY_BUCKETS, registry=self.registry)

    def record(self, verb, resource, client, content_type, code, seconds):
        self.count.labels(verb, resource, client or "unknown", content_type, str(code)).inc()
        self.latency.labels(verb, resource).observe(seconds * 1e6)

    def exposition(self):
        return prometheus_client.generate_latest(self.registry)
