"""What a subscription names: a list as the browser fetches it, ``api/v1/{kind}[/{namespaces}]``
with the list's query, parsed the way the list route parses it (pure).

A subscription is to the page the browser shows: the same kind, namespaces, filter, sort, page
and metrics; its notice says that page changed. Only the kinds table's lists are watched (a
custom resource's objects are read from the API server on each request: nothing tells the
gateway they changed). A path is bounded (MAX_PATH characters) before it is read.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from dashboard_api.kinds import table as kinds
from dashboard_api.query import listquery
from dashboard_api.query.listquery import Query
from dashboard_api.query.reads import Namespaces
from dashboard_api.serving import params
from dashboard_api.serving.errors import ApiError, bad_request

MAX_PATH = 2048
PREFIX = ("api", "v1")


class Listing:
    """A list a subscription names: ``kind`` (kinds/kind.py), ``namespaces``, ``query``."""

    __slots__ = ("kind", "namespaces", "query")

    def __init__(self, kind: Any, namespaces: Namespaces, query: Query):
        self.kind = kind
        self.namespaces = namespaces
        self.query = query


def parse(path: Any) -> Listing:
    """The list of a path such as ``api/v1/pod/default?itemsPerPage=10&sortBy=d,name``
    (relative or absolute within the cluster); a 400 for anything else, a 404 for a kind the
    gateway does not list."""
    if not isinstance(path, str) or not path:
        raise bad_request("a subscription names a list: api/v1/{kind}[/{namespaces}][?query]")
    if len(path) > MAX_PATH:
        raise bad_request("a subscription's path is at most %d characters" % MAX_PATH)
    parts = urllib.parse.urlsplit(path)
    if parts.scheme or parts.netloc or parts.fragment:
        raise bad_request("a subscription names a list of this cluster by its path")
    segments = [s for s in parts.path.split("/") if s]
    if tuple(segments[:2]) != PREFIX or len(segments) not in (3, 4):
        raise bad_request("a subscription names a list: api/v1/{kind}[/{namespaces}][?query]")
    try:
        kind = kinds.get(segments[2])
    except KeyError:
        raise ApiError(404, "no list of %r is served here" % segments[2][:100],
                       "NotFound") from None
    namespaces = Namespaces()
    if len(segments) == 4:
        if not kind.namespaced:
            raise bad_request("%s objects belong to no namespace" % kind.name)
        namespaces = Namespaces.parse(urllib.parse.unquote(segments[3]))
    arguments = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    params.check_query({name: [v.encode("utf-8") for v in values]
                        for name, values in arguments.items()})

    def arg(name):
        values = arguments.get(name)
        return values[-1].strip() if values else None
    return Listing(kind, namespaces, listquery.parse(arg))
