"""The request series of /metrics: count, latency histogram and latency summary.

Two small collectors of our own stand beside prometheus_client's histogram:

* the counter, because prometheus_client names every counter ``<name>_total`` while the series
  is ``apiserver_request_count``;
* the summary, because prometheus_client's Summary has no quantiles. Its quantiles cover a true
  one-hour sliding window (see slidingquantiles); ``_sum`` and ``_count`` are cumulative.

The text exposition is rendered here too, so that type lines carry the real series names and
the ``_created`` series that Go clients never emit are left out.
"""

import time

import prometheus_client
from prometheus_client.core import Metric
from prometheus_client.utils import floatToGoString

from dashboard_api.serving.slidingquantiles import SlidingQuantiles

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# 125 ms doubling to 8 s, in microseconds.
LATENCY_BUCKETS = tuple(125_000 * 2 ** k for k in range(7))
SUMMARY_WINDOW = 3600.0
# Seconds of observations one slice of the window holds (SlidingQuantiles' resolution): the
# window slides by this step. Each slice is a counter of its own, kept for the whole window:
# at one second a slice, a busy series held 3,600 of them, and a gateway's memory grew
# through its first hour (issue #41's soak: +2,210 counters, +0.9 MiB in half an hour).
SUMMARY_SLICE = 10.0
SUMMARY_QUANTILES = (0.5, 0.9, 0.99)
# Distinct ``client`` label values kept; any further client is counted as OTHER_CLIENT.
MAX_CLIENTS = 100
OTHER_CLIENT = "other"


class PlainCounter:
    """A labelled counter exposed under exactly its own name."""

    def __init__(self, name, documentation, labelnames):
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._values = {}

    def inc(self, labelvalues):
        self._values[labelvalues] = self._values.get(labelvalues, 0) + 1

    def describe(self):
        return [Metric(self.name, self.documentation, "counter")]

    def collect(self):
        metric = Metric(self.name, self.documentation, "counter")
        for values, count in sorted(self._values.items()):
            metric.add_sample(self.name, dict(zip(self.labelnames, values)), count)
        yield metric


class WindowSummary:
    """A labelled summary whose quantiles come from a sliding window."""

    def __init__(self, name, documentation, labelnames, window=SUMMARY_WINDOW,
                 quantiles=SUMMARY_QUANTILES, clock=time.monotonic):
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self.window = window
        self.quantiles = tuple(quantiles)
        self._clock = clock
        self._series = {}  # label values -> [SlidingQuantiles, sum, count]

    def observe(self, labelvalues, value):
        series = self._series.get(labelvalues)
        if series is None:
            series = self._series[labelvalues] = [
                SlidingQuantiles(self.window, resolution=SUMMARY_SLICE, clock=self._clock),
                0.0, 0]
        series[0].observe(value)
        series[1] += value
        series[2] += 1

    def describe(self):
        return [Metric(self.name, self.documentation, "summary")]

    def collect(self):
        metric = Metric(self.name, self.documentation, "summary")
        for values, (window, total, count) in sorted(self._series.items()):
            labels = dict(zip(self.labelnames, values))
            for q, v in window.quantiles(self.quantiles).items():
                metric.add_sample(self.name, dict(labels, quantile=str(q)), v)
            metric.add_sample(self.name + "_sum", labels, total)
            metric.add_sample(self.name + "_count", labels, count)
        yield metric


class Telemetry:
    """The request series. The ``client`` label is the caller's User-Agent, which anyone can
    set: only the first ``max_clients`` distinct values get a series of their own, later ones
    share ``other``, so that /metrics cannot be grown without bound."""

    def __init__(self, registry=None, clock=time.monotonic, runtime=False,
                 max_clients=MAX_CLIENTS):
        self.max_clients = max_clients
        self._clients = set()
        self.registry = registry or prometheus_client.CollectorRegistry()
        if runtime:
            prometheus_client.ProcessCollector(registry=self.registry)
            prometheus_client.PlatformCollector(registry=self.registry)
            prometheus_client.GCCollector(registry=self.registry)
        self.count = PlainCounter(
            "apiserver_request_count",
            "Requests served, by verb, resource, client, response content type and code.",
            ["verb", "resource", "client", "contentType", "code"])
        self.registry.register(self.count)
        self.latency = prometheus_client.Histogram(
            "apiserver_request_latencies", "Response latency in microseconds.",
            ["verb", "resource"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.summary = WindowSummary(
            "apiserver_request_latencies_summary",
            "Response latency in microseconds; quantiles over the last hour.",
            ["verb", "resource"], clock=clock)
        self.registry.register(self.summary)

    def _client_label(self, client):
        client = client or "unknown"
        if client not in self._clients:
            if len(self._clients) >= self.max_clients:
                return OTHER_CLIENT
            self._clients.add(client)
        return client

    def record(self, verb, resource, client, content_type, code, seconds):
        self.count.inc((verb, resource, self._client_label(client), content_type, str(code)))
        micros = seconds * 1e6
        self.latency.labels(verb, resource).observe(micros)
        self.summary.observe((verb, resource), micros)

    def exposition(self):
        return render(self.registry).encode("utf-8")


def _escape(value):
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')


def _line(sample):
    labels = ",".join('%s="%s"' % (k, _escape(v)) for k, v in sorted(sample.labels.items()))
    return "%s%s %s\n" % (sample.name, "{%s}" % labels if labels else "",
                          floatToGoString(sample.value))


def render(registry):
    """The Prometheus text format (0.0.4) of every family in ``registry``."""
    out = []
    for metric in registry.collect():
        samples = [s for s in metric.samples if not s.name.endswith("_created")]
        # A family's type line names its series: prometheus_client's counters end in _total.
        name = samples[0].name if metric.type == "counter" and samples else metric.name
        kind = "untyped" if metric.type == "unknown" else metric.type
        out.append("# HELP %s %s\n" % (name, metric.documentation.replace("\\", r"\\")
                                       .replace("\n", r"\n")))
        out.append("# TYPE %s %s\n" % (name, kind))
        out.extend(_line(s) for s in samples)
    return "".join(out)
