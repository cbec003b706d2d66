"""Descriptions of what a request reads from the cluster (pure: no I/O).

- ``Namespaces``: the namespace segment of a list route (reference §1.2).
- ``Need``: one related read of a kinds-table kind or of an ``Api``: a list (namespaces,
  label/field selectors) or one object (``name``). Summary modules return Needs;
  ``lists.fetch.Fetch`` carries them out and puts the results into a
  ``summaries.related.Related`` under ``Need.key``.
- ``Sublist``: a related route ``/{kind}/{ns}/{name}/{suffix}``: what to read for the parent
  (``needs``), which of the read objects are the children (``pick``) and the child kind whose
  summaries and the list's query apply. ``respond`` replaces the list for routes with another
  shape.
"""

from dashboard_api.query.listquery import FIRST_TEN
from dashboard_api.serving.errors import bad_request

# Each namespace of a list is read on its own (so users with rights in a few namespaces can
# list them together), for the list and its related reads: the count must stay small.
MAX_NAMESPACES = 32

# Keys of Related that list summaries ask for, and the kinds that fill them.
STANDARD = {"pods": "pod", "events": "event", "replicasets": "replicaset", "jobs": "job",
            "services": "service"}


class Api:
    """A resource that has no row in the kinds table (e.g. ConfigMaps read for a pod's env);
    Need.kind is either a kinds-table name, an Api, or a discovery.Resource already resolved
    (a CRD's objects)."""

    __slots__ = ("group", "plural", "versions")

    def __init__(self, group, plural, versions=("v1",)):
        self.group = group
        self.plural = plural
        self.versions = tuple(versions)


class Namespaces:
    """Which namespaces a list covers; no names means every namespace."""

    __slots__ = ("names",)

    def __init__(self, names=()):
        self.names = tuple(names)

    @classmethod
    def parse(cls, segment):
        """``a,b`` -> (a, b); items trimmed, empty ones dropped; `` `` (the UI's all) -> all."""
        names = []
        for part in (segment or "").split(","):
            part = part.strip()
            if part and part not in names:
                names.append(part)
        if len(names) > MAX_NAMESPACES:
            raise bad_request("at most %d namespaces may be listed together, got %d"
                              % (MAX_NAMESPACES, len(names)))
        return cls(names)

    @classmethod
    def one(cls, name):
        return cls((name,) if name else ())

    @property
    def all(self):
        return not self.names

    def __repr__(self):
        return "Namespaces(%s)" % (",".join(self.names) or "*")


ALL = Namespaces()


class Need:
    """One read. A list unless ``name`` is set; ``critical`` reads fail the request on any error,
    the others record a 403 in the response's ``errors`` and read as empty (None for a name)."""

    __slots__ = ("key", "kind", "namespaces", "labels", "fields", "name", "critical")

    def __init__(self, key, kind=None, namespaces=ALL, labels=None, fields=None, name=None,
                 critical=False):
        self.key = key
        self.kind = kind or STANDARD[key]
        self.namespaces = namespaces
        self.labels = labels or None
        self.fields = fields or None
        self.name = name
        self.critical = critical

    def __repr__(self):
        return "Need(%s: %s %r %s %s %s)" % (self.key, self.kind, self.namespaces, self.labels,
                                             self.fields, self.name)


def standard_needs(keys, namespaces):
    """The related lists a list summary asks for, read in the list's own namespaces."""
    return [Need(key, STANDARD[key], namespaces) for key in keys]


def scope_of(obj):
    """The namespaces of a parent object's children: its own, or all for cluster objects."""
    return Namespaces.one((obj.get("metadata") or {}).get("namespace"))


class Sublist:
    """A related route of a kind. ``needs(parent)`` -> [Need] (critical: they are the route's
    main content); ``pick(parent, rel, arg)`` -> the children's raw objects; ``kind`` names the
    child kind. ``status`` computes the list status block, ``filterable`` is False for events.
    ``respond(parent, rel, arg)`` -> a whole response, for routes that are not lists."""

    def __init__(self, suffix, kind, needs, pick=None, status=False, respond=None):
        self.suffix = suffix
        self.kind = kind
        self.needs = needs
        self.pick = pick or (lambda parent, rel, arg: rel[_first_key(needs, parent)])
        self.status = status
        self.respond = respond


def _first_key(needs, parent):
    return needs(parent)[0].key


class Embed:
    """A sublist embedded in a detail under ``field``, with a fixed query (None: the request's)."""

    def __init__(self, field, suffix, query=FIRST_TEN):
        self.field = field
        self.suffix = suffix
        self.query = query
