"""Every flag of the sidecar (upstream's names), in one place.

``python -m metrics_sidecar --kubeconfig F --db-file F --metric-resolution 1m
--metric-duration 15m --namespaces a,b --bind-address 0.0.0.0 --port 8000``
"""

import argparse
import os
import re

_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def duration(text):
    """Go-style durations (``1m``, ``90s``, ``1m30s``, ``500ms``) or plain seconds -> seconds."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise argparse.ArgumentTypeError("not a duration: %r" % text)
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise argparse.ArgumentTypeError("a duration must be positive: %r" % text)
    return seconds


def namespaces(text):
    """``a,b`` -> ["a", "b"]; empty -> [""] (every namespace)."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    return names or [""]


def parser():
    p = argparse.ArgumentParser(
        prog="metrics-sidecar",
        description="Scrapes node and pod metrics (metrics.k8s.io) into SQLite and serves them.")
    p.add_argument("--kubeconfig", default=None,
                   help="client config of the sidecar's own identity (unset: in-cluster)")
    p.add_argument("--db-file", default=None,
                   help="SQLite database file (unset: an in-memory database)")
    p.add_argument("--metric-resolution", type=duration, default=duration("1m"),
                   help="time between scrapes (default 1m)")
    p.add_argument("--metric-duration", type=duration, default=duration("15m"),
                   help="rows older than this are culled on every scrape (default 15m)")
    p.add_argument("--namespaces", type=namespaces,
                   default=namespaces(os.environ.get("POD_NAMESPACE", "")),
                   help="comma list of namespaces to scrape pods of (default $POD_NAMESPACE, "
                        "unset: every namespace; nodes are scraped only then)")
    p.add_argument("--bind-address", default="0.0.0.0", help="address to listen on")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--scrape-timeout", "--apiserver-request-timeout", dest="scrape_timeout",
                   type=duration, default=duration("30s"),
                   help="the longest one call to the API server may take, body included")
    p.add_argument("--apiserver-connect-timeout", type=duration, default=duration("5s"),
                   help="how long a new connection to the API server may take (TCP and TLS)")
    p.add_argument("--watch-idle-timeout", type=duration, default=duration("90s"),
                   help="the pod watch, silent this long (no event, no bookmark: the API "
                        "server sends one about every minute), is taken for dead and resumed "
                        "from its last resourceVersion")
    p.add_argument("-v", "--verbosity", type=int, default=0,
                   help="log verbosity: 0 warnings and scrape failures, 1+ every scrape")
    p.add_argument("--sidecar-token-file", default=None,
                   help="file holding the bearer token the gateway sends (its flag of the same "
                        "name); when set, every request but /healthz without it gets 401")
    return p


def parse(argv=None):
    return parser().parse_args(argv)
