"""The metric names the sidecar serves, and the stored column each one reads.

The specification's names (``cpu/usage``, ``memory/usage`` and the request/limit ones) plus what
upstream's clients send: ``cpu/usage_rate`` (upstream's gateway and web UI) and the bare
``cpu``/``memory`` of upstream's scraper routes.
"""

COLUMNS = {
    "cpu/usage": "cpu",
    "memory/usage": "memory",
    "cpu/request": "cpu_request",
    "cpu/limit": "cpu_limit",
    "memory/request": "memory_request",
    "memory/limit": "memory_limit",
}
ALIASES = {"cpu/usage_rate": "cpu/usage", "cpu": "cpu/usage", "memory": "memory/usage"}
DEFAULT = ("cpu/usage", "memory/usage")


def canonical(name):
    """The specification's name for ``name``, or None when it is no metric of ours."""
    name = ALIASES.get(name, name)
    return name if name in COLUMNS else None
