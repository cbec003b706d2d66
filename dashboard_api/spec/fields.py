"""One field of an object as a field selector reads it (``involvedObject.name=x``), pure.

The watch cache evaluates field selectors with ``value`` (cache/selectors.py), and a spec may
declare an index of one field (``Field``, spec/joins.py): the cache then answers a selector's
equality on that field from the index instead of a walk of the namespaces (cache/source.py).
"""


def value(obj, path):
    """The field at the dotted ``path`` as text, "" when absent (booleans as the API server
    writes them)."""
    found = obj
    for part in path.split("."):
        if not isinstance(found, dict):
            return ""
        found = found.get(part)
    if found is None:
        return ""
    if isinstance(found, bool):
        return "true" if found else "false"
    return found if isinstance(found, str) else str(found)


class Field:
    """An index's values (``Spec.indexes``): one field's, ``path``. The watch cache keeps such
    an index as rows sorted by that value (cache/fieldindex.py), for the selectors on it,
    not as buckets summaries look up."""

    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path

    def value(self, obj):
        return value(obj, self.path)

    def __call__(self, obj):
        found = value(obj, self.path)
        return (found,) if found else ()
