"""Decoding only what a projection keeps (issue #30, start-up at the speed of the wire).

A kind's projection (kinds/projection.py) says what the cache keeps of its objects; the generic
decoder still builds every dict and string of the object first, and most of a pod's spec (its
containers' env, probes, mounts; its tolerations) and a node's status (the 40-60 images the
kubelet reports) is built only to be dropped. ``decoder(shape)`` turns the same declaration into
msgspec types that skip, in C, what an ``only`` leaves out, and a ``metadata.managedFields``
(every object of a real cluster has them, often as large as its spec; slim.metadata drops them).

A typed decoder gives the object as the cache keeps it, projected (issue #41): ``decode(raw)``
is ``project(generic(raw))`` for every input, keys in the same order (a projection keeps an
object's fields in its own order, as the typed decode reads them). What the typed decode read
is not projected again: only what it leaves (``_finisher``: the lists an ``only`` leaves out
when empty, the fields read whole that a ``where`` filters) is done after it. Where the typed
decode cannot say the same (a field of another JSON type than the API server's, a top-level
field the kind does not declare, anything but an object), it gives up and the generic decoder
decodes the whole object, then the projection runs (tests/unit/kinds/test_decoding.py).

Only kinds laid out as most are (metadata, spec, status; a config map's data) whose projection
keeps less than a whole spec or status, or drops a top-level field, get a typed decoder. The
others are decoded whole, as before: an event's or an endpoint slice's other top-level fields
would make the typed decode fall back on every object (twice the cost), and a replica set's
spec is read whole for its template's fingerprint (typed, it cost 5% more a record).
"""

import itertools
from typing import Any, Dict, List, TypedDict

import msgspec

from dashboard_api.kinds.projection import ALL, Digest, Each, Shape, compile as compile_projection

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
    if not isinstance(shape, Shape) or not shape.rest or \
            any(isinstance(sub, Digest) for sub in shape.fields.values()):
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


def projects(shape):
    """Whether ``decoder(shape)`` gives objects as the projection keeps them (a typed decoder,
    or a projection that keeps everything); else the generic decoder's objects are projected
    when their record is made (Cached.to_row), so that a re-list's objects whose rows are kept
    (unchanged) are never projected."""
    return typed_fields(shape) is not None or _whole(shape)


def decoder(shape, project=None):
    """``decode(raw) -> object`` for a kind's projection ``shape`` (``project``: the function
    kinds/projection.py ``compile`` made of it). The typed decoder, when typing gains
    something, gives the object as the cache keeps it, projected, its metadata as it came
    (cache/slim.py ``record`` slims that); otherwise the generic decoder (``projects``)."""
    fields = typed_fields(shape)
    if fields is None:
        return generic
    dropped = frozenset(shape.drop)
    plain = _struct(fields, Any)
    managed = _struct(fields, Dict[str, msgspec.Raw])
    names = tuple(fields)
    finish = _finisher(shape, top=True)

    def decode(raw):
        with_managed = MANAGED in (raw if type(raw) is bytes else bytes(raw))
        try:
            obj = (managed if with_managed else plain)(raw)
        except msgspec.ValidationError:
            obj = generic(raw)
            return project(obj) if type(obj) is dict else obj
        out = {}
        for name, value in zip(names, msgspec.structs.astuple(obj)):
            if value is not msgspec.UNSET and name not in dropped:
                out[name] = value
        meta = out.get("metadata")
        if with_managed and meta is not None:
            out["metadata"] = {k: generic(v) for k, v in meta.items() if k != "managedFields"}
        if finish is not None:
            finish(out)
        return out
    return decode


def _whole(shape):
    """Whether ``shape`` keeps every field as it is (its projection only copies)."""
    return isinstance(shape, Shape) and shape.rest and not shape.fields and not shape.drop


_OBJECT, _LIST, _OTHER = "object", "list", "other"


def _finisher(shape, top=False):
    """What the typed decode of ``shape`` leaves to its projection, done in place on the decoded
    dict: a function, or None when there is nothing left (issue #41: the projection of a typed
    pod copied what the typed decode had already read as the projection keeps it, a fifth of
    a listed pod's cost). A field read as a TypedDict or a list of them holds only the fields
    kept, in the object's own order, as the projection keeps them; what remains is the rules
    of an ``only`` (a list of objects left out when empty) and the fields read whole (Any)
    whose projection filters (``Each`` with ``where``) or computes (``Digest``): those get the
    projection's own code. ``top``: the object itself (a ``but``: fields kept as they are
    when not of the expected type)."""
    steps = []
    for name, sub in shape.fields.items():
        if sub is ALL:
            continue
        each = isinstance(sub, Each)
        if _typed(sub) is Any:
            steps.append((name, _OTHER, compile_projection(sub), each))
        else:
            steps.append((name, _LIST if each else _OBJECT,
                          _finisher(sub.shape if each else sub), each))
    steps = [step for step in steps if step[1] == _OTHER or step[2] is not None or
             (step[1] == _LIST and not top)]
    if not steps:
        return None

    def finish(obj):
        for name, how, fn, each in steps:
            if name not in obj:
                continue
            value = obj[name]
            if how is _OBJECT:
                if value:
                    fn(value)
            elif how is _LIST:
                if value:
                    if fn is not None:
                        for item in value:
                            fn(item)
                elif not top:
                    del obj[name]   # an ``only`` leaves an empty list out
            elif value and isinstance(value, list if each else dict):
                projected = fn(value)
                if projected or top or not each:   # an ``only`` keeps an object
                    obj[name] = projected
                else:
                    del obj[name]
            elif not top and (each or not isinstance(value, dict)):
                del obj[name]   # an ``only`` keeps an object, even empty, and nothing else
    return finish


def _struct(fields, metadata):
    types = dict(fields, metadata=metadata)
    struct = msgspec.defstruct(
        "Object%d" % next(_names),
        [(name, types[name], msgspec.UNSET) for name in fields],
        forbid_unknown_fields=True)
    return msgspec.json.Decoder(struct).decode
