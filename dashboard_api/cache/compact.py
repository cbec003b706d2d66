"""Compact dicts: a record's own maps share their keys with every map of the same layout.

A plain dict stores each of its keys (and their hashes) beside its values: 304 bytes for a
pod's metadata of nine keys on CPython 3.11, most of it the keys. CPython already knows a
smaller dict, the one it makes for an instance's attributes: a *split* dict, whose keys live
once in its class and which holds only its values (160 bytes for the same nine keys). It is a
``dict`` in every way (``type(d) is dict``; reads, iteration in insertion order, equality, JSON
and copies the same), so nothing that reads a record knows.

``compact(mapping)`` makes such a dict from a mapping: an instance of a class made for that
exact sequence of keys (its *layout*), filled in order, then its ``__dict__`` taken and the
instance dropped. The maps that gain are those a record keeps for itself (they hold a unique
value: a pod's metadata, annotations with its IP, its spec with its node) and the pool's
shared maps, hundreds of thousands of them in a large cache (issue #41: a 150,000-pod cache
near its 400 MiB bound; cache/slim.py calls this).

Bounded: at most ``LAYOUTS`` layouts (each one a class and its keys, ~2.5 KB: ~5 MiB in
all, a layout paying for itself after some twenty maps); a map of a layout met after that, of
more than ``MAX_KEYS`` keys (CPython shares at most 30), or with a key that is not a string
or starts with ``__`` stays a plain dict, its keys interned (one copy of each key, as every
record's metadata and annotations had before compact maps). Writing a key a compact dict does
not have makes it a plain dict again (CPython does it), so a record is compacted only once
made: records never change (cache/store.py).
"""

from sys import intern

LAYOUTS = 2048
MAX_KEYS = 30
_layouts = {}


def compact(mapping):
    """A dict equal to ``mapping``, in its order, sharing its keys with every map of its layout;
    when it cannot (see the module's bounds), a plain dict whose keys are interned (``mapping``
    itself when they are already): its keys still one copy each."""
    if not mapping:
        return mapping
    layout = tuple(mapping)
    made = _layouts.get(layout)
    if made is None:
        if len(layout) > MAX_KEYS or len(_layouts) >= LAYOUTS or \
                not all(_plain(key) for key in layout):
            return _keys_interned(mapping)
        # workers make records at once: two classes for one layout is harmless
        made = _layouts.setdefault(layout, _layout(layout))
    out = made().__dict__
    for key, value in mapping.items():
        out[key] = value
    return out


def layouts():
    """How many layouts there are (the soak's memory report: cache/slim.py ``tables``)."""
    return len(_layouts)


def _keys_interned(mapping):
    """``mapping`` with its string keys interned: ``mapping`` itself when each key is the
    interned copy (a key met first becomes it), else a new dict."""
    if all(type(key) is not str or intern(key) is key for key in mapping):
        return mapping
    return {intern(key) if type(key) is str else key: value for key, value in mapping.items()}


def _plain(key):
    """Whether ``key`` can be an attribute of a layout's first instance: a string, and not a
    name Python gives a meaning (``__class__`` or ``__dict__`` would fail; a custom resource's
    spec may hold any key)."""
    return type(key) is str and not key.startswith("__")


def _layout(keys):
    """A class whose instances' dicts share ``keys``. Its first instance is given them as
    attributes, in order: that sizes the keys the class shares (CPython 3.9 would otherwise
    keep its first, smaller table and make a dict of more than five keys a plain one)."""
    made = type("Layout", (), {"__slots__": ("__dict__",)})
    first = made()
    for key in keys:
        setattr(first, key, None)
    return made
