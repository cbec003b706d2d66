"""What the cache keeps of an object, declared as data: a tree of field names (``Shape``).

A kind's spec names its projection (``Spec.projection``); ``compile`` turns it into the function
the watch cache and the pass-through source run on every object (cache/slim.py), so both give the
same bytes. Declared as data rather than written as code so that the follow-up of issue #19 can
turn the same declaration into a compact typed record (a msgspec ``Struct`` per ``Shape`` whose
``rest`` is False: its fields are exactly ``fields``) and decode the watch stream straight into
it. Keep projections declarative: a new rule belongs here as a new kind of node, not in a
function of one kind.

Nodes:

- ``only(*names, **shaped)``: an object of which only these fields are kept (a name with a
  ``Shape`` or ``Each`` is kept projected). A field whose value is empty (``[]``, ``{}``, null) and
  that has a sub-shape is left out, as is an ``Each`` that keeps no element.
- ``but(*dropped, **shaped)``: the whole object except ``dropped``, with the named fields
  projected (when they hold a non-empty value of the right type; others are kept as they are).
- ``Each(shape, where=None)``: a list of objects, each projected by ``shape`` (``True``: kept
  whole); ``where`` keeps only the elements where that field is set (e.g. the volumes that are
  claims).

Every object's ``metadata`` is slimmed the same way for every kind (cache/slim.py ``metadata``:
no managedFields, no last-applied annotation, short strings interned); a projection declares
the rest of the object, i.e. its top level is always a ``but``.
"""

ALL = True


class Shape:
    """One JSON object's projection (see the module docstring)."""

    __slots__ = ("fields", "rest", "drop")

    def __init__(self, fields=None, rest=False, drop=()):
        self.fields = dict(fields or {})   # name -> True | Shape | Each
        self.rest = rest                   # other fields kept as they are
        self.drop = tuple(drop)            # with ``rest``: fields removed

    def __repr__(self):
        return "Shape(%r, rest=%r, drop=%r)" % (self.fields, self.rest, self.drop)


class Each:
    """A list of objects, each projected by ``shape``; ``where``: only elements with that field."""

    __slots__ = ("shape", "where")

    def __init__(self, shape=ALL, where=None):
        self.shape = shape
        self.where = where

    def __repr__(self):
        return "Each(%r, where=%r)" % (self.shape, self.where)


def only(*names, **shaped):
    fields = {name: ALL for name in names}
    fields.update(shaped)
    return Shape(fields, rest=False)


def but(*dropped, **shaped):
    return Shape(shaped, rest=True, drop=dropped)


WHOLE = but()   # the object as the API server has it (metadata slimmed)


def compile(node):
    """A function ``(value) -> projected value`` of ``node`` (a Shape, an Each or True): closures
    built once per kind, so projecting costs what hand-written code would."""
    if node is ALL:
        return None
    if isinstance(node, Each):
        return _compile_each(node)
    return _compile_shape(node)


def _compile_each(each):
    inner = compile(each.shape)
    where = each.where
    if inner is None and where is None:
        return None
    if inner is None:
        return lambda items: [i for i in items if i.get(where)]
    if where is None:
        return lambda items: [inner(i) for i in items]
    return lambda items: [inner(i) for i in items if i.get(where)]


def _compile_shape(shape):
    plain = tuple(n for n, sub in shape.fields.items() if sub is ALL)
    nested = tuple((n, compile(sub), list if isinstance(sub, Each) else dict)
                   for n, sub in shape.fields.items() if sub is not ALL)
    if shape.rest:
        dropped = frozenset(shape.drop)

        def project_rest(obj):
            out = {k: v for k, v in obj.items() if k not in dropped} if dropped else dict(obj)
            for name, fn, type_ in nested:
                value = out.get(name)
                if value and isinstance(value, type_):
                    out[name] = fn(value)
            return out
        return project_rest if (dropped or nested) else dict

    def project_only(obj):
        out = {k: obj[k] for k in plain if k in obj}
        for name, fn, type_ in nested:
            value = obj.get(name)
            if value and isinstance(value, type_):
                value = fn(value)
                if value:
                    out[name] = value
        return out
    return project_only
