"""Series arithmetic and Metric objects (pure: no I/O).

A series is ``{x: y}`` with x in milliseconds since the epoch. A resource's series is the sum
over its pods per x (as upstream); a list's cumulative series applies the requested aggregation
across the resources that have a value at that x.
"""

import datetime

FUNCTIONS = {
    "sum": sum,
    "min": min,
    "max": max,
    "avg": lambda values: sum(values) / len(values),
}


def summed(serieses):
    """The per-x sum of several series."""
    out = {}
    for series in serieses:
        for x, y in series.items():
            out[x] = out.get(x, 0) + y
    return out


def aggregated(serieses, how):
    """The per-x ``how`` (sum, avg, min, max) over the series that have a value at x."""
    values = {}
    for series in serieses:
        for x, y in series.items():
            values.setdefault(x, []).append(y)
    fn = FUNCTIONS[how]
    return {x: fn(ys) for x, ys in values.items()}


def _stamp(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def metric(name, series, label, aggregation="sum"):
    """The specification's Metric object: dataPoints {x ms, y}, metricPoints {timestamp
    RFC 3339, value unsigned integer}, in time order."""
    xs = sorted(series)
    return {
        "metricName": name,
        "dataPoints": [{"x": int(x), "y": series[x]} for x in xs],
        "metricPoints": [{"timestamp": _stamp(x), "value": max(0, int(round(series[x])))}
                         for x in xs],
        "label": label,
        "aggregation": aggregation,
    }
