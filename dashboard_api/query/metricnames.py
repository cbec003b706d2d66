"""The metric names the gateway accepts in ``metricNames`` (pure).

The specification's names (cpu in nanocores, memory in bytes) and those of upstream's web UI
and gateway: ``cpu/usage_rate`` is upstream's name of ``cpu/usage``. A response names a metric
as it was asked for, so the UI finds what it asked for; the sidecar is asked by the
specification's name.
"""

CANONICAL = ("cpu/usage", "memory/usage", "cpu/request", "cpu/limit", "memory/request",
             "memory/limit")
ALIASES = {"cpu/usage_rate": "cpu/usage"}
DEFAULT = ("cpu/usage", "memory/usage")   # what details show when no metricNames is given
AGGREGATIONS = ("sum", "avg", "min", "max")


def canonical(name):
    """The specification's name for ``name``, or None when it is no metric."""
    name = ALIASES.get(name, name)
    return name if name in CANONICAL else None


def known():
    return ", ".join(CANONICAL + tuple(ALIASES))
