"""What the cache keeps of an object, declared as data: a tree of field names (``Shape``).

A kind names its projection (``Kind.projection``); ``compile`` turns it into the function
the watch cache and the pass-through source run on every object (cache/slim.py), so both give the
same bytes. Declared as data rather than written as code so that the follow-up of issue #19 can
turn the same declaration into a compact typed record (a msgspec ``Struct`` per ``Shape`` whose
``rest`` is False: its fields are exactly ``fields``) and decode the watch stream straight into
it. Keep projections declarative: a new rule belongs here as a new kind of node, not in a
function of one kind.

Nodes:

- ``only(*names, **shaped)``: an object of which only these fields are kept, in the object's
  own order, as a typed decoder reads them (kinds/decoding.py; a name with a ``Shape`` or
  ``Each`` is kept projected). An object field with a sub-shape is kept whenever it
  is present, even when nothing of it is kept (``state.running`` without its ``startedAt``: a
  reader tests its presence); a list field with a sub-shape is left out when empty, or when its
  ``Each`` keeps no element.
- ``but(*dropped, **shaped)``: the whole object except ``dropped``, with the named fields
  projected (when they hold a non-empty value of the right type; others are kept as they are).
- ``Each(shape, where=None)``: a list of objects, each projected by ``shape`` (``True``: kept
  whole); ``where`` keeps only the elements where that field is set (e.g. the volumes that are
  claims).
- ``Digest(source, fn)``: a field computed from another field of the same object (whole, as the
  API server sent it), e.g. a fingerprint of a replica set's pod template that a join compares
  instead of keeping the template; the field is set whenever the object has ``source``.

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


class Digest:
    """A field holding ``fn(value)`` of the object's field ``source`` (set when it is present)."""

    __slots__ = ("source", "fn")

    def __init__(self, source, fn):
        self.source = source
        self.fn = fn

    def __repr__(self):
        return "Digest(%r, %r)" % (self.source, self.fn)


def only(*names, **shaped):
    fields = {name: ALL for name in names}
    fields.update(shaped)
    return Shape(fields, rest=False)


def but(*dropped, **shaped):
    return Shape(shaped, rest=True, drop=dropped)


WHOLE = but()   # the object as the API server has it (metadata slimmed)


def compile(node):
    """A function ``(value) -> projected value`` of ``node`` (a Shape, an Each or True; None for
    True: the value as it is). The tree is turned into the source of one plain function, as it
    would be written by hand (no call per field or per list element), and compiled once per
    kind: the cache projects every watch event with it."""
    if node is ALL:
        return None
    names = {}
    body = _emit(node, "obj", "out", names, 1)
    source = "def project(obj):\n%s    return out\n" % body
    scope = dict(names)
    exec(source, scope)  # the source is built here from the spec's field names (repr'd)
    project = scope["project"]
    project.source = source
    return project


def _const(names, value):
    name = "_c%d" % len(names)
    names[name] = value
    return name


def _emit(node, src, dst, names, depth):
    """Statements setting ``dst`` to ``node`` applied to ``src`` (a value of the right type)."""
    pad = "    " * depth
    if isinstance(node, Each):
        var = "i%d" % depth
        cond = " if %s.get(%r)" % (var, node.where) if node.where else ""
        if node.shape is ALL:
            return "%s%s = [%s for %s in %s%s]\n" % (pad, dst, var, var, src, cond)
        expr = _inline(node.shape, var, names)
        if expr is not None:
            return "%s%s = [%s for %s in %s%s]\n" % (pad, dst, expr, var, src, cond)
        inner = compile(node.shape)
        fn = _const(names, inner)
        return "%s%s = [%s(%s) for %s in %s%s]\n" % (pad, dst, fn, var, var, src, cond)
    lines = []
    plain = tuple(n for n, sub in node.fields.items() if sub is ALL)
    if node.rest:
        dropped = frozenset(node.drop)
        if dropped:
            lines.append("%s%s = {k: v for k, v in %s.items() if k not in %s}\n"
                         % (pad, dst, src, _const(names, dropped)))
        else:
            lines.append("%s%s = dict(%s)\n" % (pad, dst, src))
    else:   # in the object's own order, as a decoder reading only these fields gives them
        lines.append("%s%s = {k: v for k, v in %s.items() if k in %s}\n"
                     % (pad, dst, src, _const(names, frozenset(
                         n for n, sub in node.fields.items() if not isinstance(sub, Digest)))))
    for field, sub in node.fields.items():
        if sub is ALL:
            continue
        if isinstance(sub, Digest):
            lines.append("%sif %r in %s:\n%s    %s[%r] = %s(%s[%r])\n"
                         % (pad, sub.source, src, pad, dst, field, _const(names, sub.fn), src,
                            sub.source))
            continue
        value, result = "v%d" % depth, "r%d" % depth
        each = isinstance(sub, Each)
        lines.append("%s%s = %s.get(%r)\n" % (pad, value, src, field))
        if each or node.rest:
            lines.append("%sif %s and isinstance(%s, %s):\n"
                         % (pad, value, value, "list" if each else "dict"))
        else:   # an object kept by ``only`` stays, even emptied: readers test its presence
            lines.append("%sif isinstance(%s, dict):\n" % (pad, value))
        lines.append(_emit(sub, value, result, names, depth + 1))
        if node.rest:
            lines.append("%s    %s[%r] = %s\n" % (pad, dst, field, result))
        elif not each:   # taken in place above; left out unless an object
            lines.append("%s    %s[%r] = %s\n%selse:\n%s    %s.pop(%r, None)\n"
                         % (pad, dst, field, result, pad, pad, dst, field))
        else:
            lines.append("%s    if %s:\n%s        %s[%r] = %s\n%s    else:\n"
                         "%s        %s.pop(%r, None)\n%selse:\n%s    %s.pop(%r, None)\n"
                         % (pad, result, pad, dst, field, result, pad, pad, dst, field, pad,
                            pad, dst, field))
    return "".join(lines)


def _inline(shape, var, names):
    """An expression projecting ``var`` by a Shape without nested fields, else None."""
    if not isinstance(shape, Shape) or any(sub is not ALL for sub in shape.fields.values()):
        return None
    if shape.rest:
        if shape.fields:
            return None
        return "{k: v for k, v in %s.items() if k not in %s}" % (
            var, _const(names, frozenset(shape.drop)))
    return "{k: v for k, v in %s.items() if k in %s}" % (var, _const(names,
                                                                 frozenset(shape.fields)))
