"""Upstream's standard metrics for the upstream web UI (``--web-ui-compat``), pure shapes plus
the short-lived sharing of sidecar answers.

The upstream UI asks for lists without ``metricNames``; upstream's backend attaches its standard
metrics anyway (reference §2.6): CPU usage rate and memory usage, summed. The UI fills the pod
list's CPU and memory cells and their sparklines from each pod's ``metrics`` (upstream's
PodMetrics, §5.1) and the charts above pod, workload and node lists from ``cumulativeMetrics``.
With the switch, a list asked for without ``metricNames`` gets exactly that; asked for with
``metricNames`` it keeps the specification's shapes, and without the switch nothing changes.

Units are upstream's: CPU in millicores (the sidecar's series are in nanocores, as the
specification says), memory in bytes, ``dataPoints`` x in Unix seconds (the UI multiplies by
1000), ``metricPoints`` only when exactly one resource contributed (§11.1).

The UI polls every list every few seconds from every open tab; ``SharedAnswers`` lets callers
share one sidecar request for ``TTL`` seconds (keyed on the request's path: the same pods and
metric), at most ``SIZE`` answers (expired ones are dropped as new ones come), and concurrent identical requests share one call. A failed
request is never kept. The sidecar's own resolution is a minute by default, so a few seconds of
sharing show nothing older than the sidecar would.
"""

import datetime
import time

import cachetools

from dashboard_api.metrics.aggregate import aggregated
from dashboard_api.serving.singleflight import SingleFlight

CPU, MEMORY = "cpu/usage_rate", "memory/usage"
STANDARD = (CPU, MEMORY)          # upstream's standard metric names, in its order
AGGREGATIONS = ("sum",)           # upstream's standard aggregation
NANOCORES_PER_MILLICORE = 1_000_000
TTL = 5.0
SIZE = 128   # answers kept: each is at most NAMES_PER_REQUEST pods' windows of points


def _stamp(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def upstream_value(name, value):
    """A sidecar value in upstream's unit (CPU: nanocores -> millicores), an unsigned integer."""
    if name == CPU:
        value = value / NANOCORES_PER_MILLICORE
    return max(0, int(round(value)))


def history(name, series):
    """Upstream's MetricPoint list of ``series`` ({x ms: y}), in time order."""
    return [{"timestamp": _stamp(x), "value": upstream_value(name, series[x])}
            for x in sorted(series)]


def pod_metrics(cpu, memory):
    """Upstream's PodMetrics of one pod from its CPU and memory series ({x ms: y}): the last
    point's value and the histories; a field is null when that metric has no points, the whole
    is None when neither has any."""
    if not cpu and not memory:
        return None
    out = {}
    for name, series, usage, past in ((CPU, cpu, "cpuUsage", "cpuUsageHistory"),
                                      (MEMORY, memory, "memoryUsage", "memoryUsageHistory")):
        out[usage] = upstream_value(name, series[max(series)]) if series else None
        out[past] = history(name, series) if series else None
    return out


def cumulative(name, serieses, how="sum"):
    """Upstream's cumulative Metric of a list: ``how`` per x over the resources' series (each
    already the sum over the resource's pods), x in Unix seconds; ``metricPoints`` only when
    exactly one resource contributed."""
    contributing = [s for s in serieses if s]
    series = aggregated(contributing, how)
    return {
        "dataPoints": [{"x": int(x) // 1000, "y": upstream_value(name, series[x])}
                       for x in sorted(series)],
        "metricPoints": history(name, series) if len(contributing) == 1 else [],
        "metricName": name,
        "aggregation": how,
    }


def attach(page, per_item, envelope):
    """Puts upstream's shapes on a list: ``per_item`` holds, per page item, {name: series} of
    STANDARD. Items that carry ``metrics`` (pods) get PodMetrics; the envelope gets one
    cumulative Metric per standard name."""
    for item, found in zip(page, per_item):
        if "metrics" in item:
            item["metrics"] = pod_metrics(found.get(CPU), found.get(MEMORY))
    envelope["cumulativeMetrics"] = [cumulative(name, [found.get(name) for found in per_item],
                                                how)
                                     for name in STANDARD for how in AGGREGATIONS]


def detail_metric(name, series):
    """A detail's Metric (pod or node) in upstream's units: one resource, so with its points."""
    return cumulative(name, [series])


class SharedAnswers:
    """Sidecar answers shared between callers for ``ttl`` seconds (see the module docstring):
    the project's TTL cache for answers given, its single-flight helper for requests under way.
    A failure is never kept: the next caller asks again."""

    def __init__(self, ttl=TTL, size=SIZE, clock=time.monotonic):
        self._answers = cachetools.TTLCache(size, ttl, timer=clock)   # path -> answer
        self._asking = SingleFlight()
        self.asked = 0       # requests made (for tests and figures)
        self.shared = 0      # answers given from a request another caller made

    def __len__(self):
        self._answers.expire()
        return len(self._answers)

    async def get(self, path, ask):
        """``await ask(path)``, or the answer of an identical request made less than ``ttl``
        seconds ago (or still under way). ``path`` is any hashable key of the request (the
        metrics decorator's: the path and the sidecar's newest scrape known)."""
        if path in self._answers or path in self._asking:
            self.shared += 1
            if path in self._answers:
                return self._answers[path]
        else:
            self.asked += 1

        async def asked():
            answer = await ask(path)
            self._answers[path] = answer
            return answer
        return await self._asking.run(path, asked)
