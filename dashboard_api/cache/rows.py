"""A store's row (query/rows.py ``Row``) of a slim object: the keys a list sorts and filters it by
and its status facts, computed once when the object arrives (not on every request). Rows are
never changed once made: an update replaces the row, so readers outside the event loop (a
selection in the executor) see whole rows.
"""

from dashboard_api.cache import slim
from dashboard_api.query.properties import keys_of
from dashboard_api.query.rows import Row


def row_of(kind, obj, previous=None):
    """The row of a slim object: the list's property keys read from its own summary (every
    list property depends on the object alone). ``previous``: the row this one replaces,
    whose keys it shares where they are equal (slim.pooled does so for the object)."""
    meta = obj.get("metadata") or {}
    keys = keys_of(kind.key_item(obj), kind.properties, slim.text_pool()) if kind else ()
    if previous is not None and previous.keys and len(previous.keys) == len(keys):
        keys = _kept(keys, previous.keys)
    facts = kind.status_facts(obj) if kind is not None and kind.status_facts else None
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    place = previous.place if previous is not None and previous.name == name and \
        previous.namespace == namespace else None   # the same object: its place shared
    return Row(obj, namespace, name, keys, facts=facts, place=place)


def _kept(keys, old):
    """``keys`` with each value equal to ``old``'s at its place (of the same type) taken from
    ``old``; ``old`` itself when all are."""
    kept = tuple(before if type(before) is type(value) and before == value else value
                 for value, before in zip(keys, old))
    return old if all(a is b for a, b in zip(kept, old)) else kept



def bucket_key(row):
    """A row's key in index buckets: (namespace + "/", name), their order the API server's
    list order: the row's ``place``, one tuple for all its indexes (a pod is in two to five:
    ~56 bytes each saved) and for every version of the object."""
    return row.place

