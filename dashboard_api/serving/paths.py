"""Where a request's cluster is in its path: every route of one cluster is served under
``/clusters/{name}/``, the default cluster's also at the root (issue #28). The router, the body
limit and the terminal's endpoint read it before any handler runs."""

from __future__ import annotations

import re
import urllib.parse

PREFIX = "/clusters/"
_PATH = re.compile(r"^/clusters/([^/]+)(/.*)?$")


def split_path(path: str) -> tuple[str | None, str]:
    """(cluster name, the path within the cluster) of a request path; (None, path) at the root
    (the default cluster). ``/clusters/a`` is (a, "/"). The name is percent-decoded: a link
    may spell ``arn:aws:...`` as ``arn%3Aaws%3A...``."""
    match = _PATH.match(path)
    if match is None:
        return None, path
    return urllib.parse.unquote(match.group(1)), match.group(2) or "/"


def base_path(name: str | None) -> str:
    """The path a cluster's pages and API are served under: ``/clusters/{name}/``; ``/`` for
    None (the default cluster at the root)."""
    return "/" if name is None else "%s%s/" % (PREFIX, name)
