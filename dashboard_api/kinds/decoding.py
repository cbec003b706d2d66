"""Decoding only what a projection keeps (issue #30, start-up at the speed of the wire).

A kind's projection (kinds/projection.py) says what the cache keeps of its objects; the generic
decoder still builds every dict and string of the object first, and most of a pod's spec (its
containers' env, probes, mounts; its tolerations) and a node's status (the 40-60 images the
kubelet reports) is built only to be dropped. ``decoder(shape)`` turns the same declaration into
msgspec types that skip, in C, what an ``only`` leaves out, and a ``metadata.managedFields``
(every object of a real cluster has them, often as large as its spec; slim.metadata drops them).

The answer is never different from the generic decoder's as the cache reads it:
``project(decode(raw))`` is ``project(generic(raw))`` for every input. Where the typed decode
cannot say the same (a field of another JSON type than the API server's, a top-level field the
kind does not declare, anything but an object), it gives up and the generic decoder decodes the
whole object (tests/unit/kinds/test_decoding.py).

Only kinds laid out as most are (metadata, spec, status; a config map's data) whose projection
keeps less than a whole spec or status, or drops a top-level field, get a typed decoder. The
others are decoded whole, as before: an event's or an endpoint slice's other top-level fields
would make the typed decode fall back on every object (twice the cost), and a replica set's
spec is read whole for its template's fingerprint (typed, it cost 5% more a record).
"""

import itertools
from typing import Any, Dict, List, TypedDict

import msgspec

from dashboard_api.kinds.projection import ALL, Digest, Each, Shape

generic = msgspec.json.Decoder().decode

# The top-level fields of an object laid out as most kinds are (a config map's too), in the
# order the API server writes them (Go's field order), which the decoded object keeps; another
# field makes the typed decode give up.
LAYOUT = ("kind", "apiVersion", "metadata", "spec", "status", "immutable", "data", "binaryData")
MANAGED = b'"managedFields"'

_names = itertools.count()


def _typed(node):
    """The msgspec type reading what ``node`` keeps of a value: an ``only`` becomes a
    TypedDict of its fields (fields not named are skipped, not built), a list of them a List;
    anything kept whole or filtered later (``but``, ``Each`` with ``where``) is Any, and so is
    an object with a ``Digest`` (a replica set's spec: its template is read whole for it)."""
    if isinstance(node, Each):
        if node.where is not None or node.shape is ALL:
            return Any
        inner = _typed(node.shape)
        return Any if inner is Any else List[inner]
    if not isinstance(node, Shape) or node.rest:
        return Any
    if any(isinstance(sub, Digest) for sub in node.fields.values()):
        return Any   # computed from another field, read whole: little left to skip
    fields = {name: _typed(sub) for name, sub in node.fields.items()}
    return TypedDict("Kept%d" % next(_names), fields, total=False)


def typed_fields(shape):
    """{top-level field: type} of a kind's typed decoder, or None when its objects are not
    laid out as LAYOUT says or nothing would be skipped."""
    if not isinstance(shape, Shape) or not shape.rest:
        return None
    named = set(shape.fields) | set(shape.drop)
    if not named <= set(LAYOUT) - {"metadata"}:
        return None
    fields = {name: Any for name in LAYOUT}
    for name, sub in shape.fields.items():
        fields[name] = _typed(sub)
    for name in shape.drop:   # skipped unread
        fields[name] = msgspec.Raw
    if all(fields[name] is Any for name in shape.fields) and not shape.drop:
        return None
    return fields


def decoder(shape):
    """``decode(raw) -> object`` for a kind's projection ``shape``: the generic decoder when
    typing it gains nothing, else the typed one (see the module docstring)."""
    fields = typed_fields(shape)
    if fields is None:
        return generic
    dropped = frozenset(shape.drop)
    plain = _struct(fields, Any)
    managed = _struct(fields, Dict[str, msgspec.Raw])
    names = tuple(fields)

    def decode(raw):
        with_managed = MANAGED in (raw if type(raw) is bytes else bytes(raw))
        try:
            obj = (managed if with_managed else plain)(raw)
        except msgspec.ValidationError:
            return generic(raw)
        out = {}
        for name, value in zip(names, msgspec.structs.astuple(obj)):
            if value is not msgspec.UNSET and name not in dropped:
                out[name] = value
        meta = out.get("metadata")
        if with_managed and meta is not None:
            out["metadata"] = {k: generic(v) for k, v in meta.items() if k != "managedFields"}
        return out
    return decode


def _struct(fields, metadata):
    types = dict(fields, metadata=metadata)
    struct = msgspec.defstruct(
        "Object%d" % next(_names),
        [(name, types[name], msgspec.UNSET) for name in fields],
        forbid_unknown_fields=True)
    return msgspec.json.Decoder(struct).decode
