"""One field of an object as a field selector reads it (``involvedObject.name=x``), pure.

The watch cache evaluates field selectors with ``value`` (query/selectors.py), and a spec may
declare an index of one field (``Field``, kinds/joins.py): the cache then answers a selector's
equality on that field from the index instead of a walk of the namespaces (lists/cachesource.py).
"""


def value(obj, path):
    """The field at the dotted ``path`` as text, "" when absent (booleans as the API server
    writes them)."""
    return value_at(obj, path.split("."))


def value_at(obj, parts):
    """``value`` of the path split at its dots."""
    found = obj
    for part in parts:
        if not isinstance(found, dict):
            return ""
        found = found.get(part)
    if found is None:
        return ""
    if isinstance(found, bool):
        return "true" if found else "false"
    return found if isinstance(found, str) else str(found)


class Field:
    """An index's values (``Kind.indexes``): one field's, ``path``. The watch cache keeps such
    an index as rows sorted by that value (cache/fieldindex.py), for the selectors on it,
    not as buckets summaries look up."""

    __slots__ = ("path", "parts")

    def __init__(self, path):
        self.path = path
        self.parts = tuple(path.split("."))

    def value(self, obj):
        return value_at(obj, self.parts)

    def __call__(self, obj):
        found = value_at(obj, self.parts)
        return (found,) if found else ()
