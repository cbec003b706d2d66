"""Slim records: what list summaries, sort and filter keys and related joins read, and no more.

Both sources of a list (the watch cache and the pass-through LIST) slim every object the same
way, so the two give the same bytes. Details (one object) are read whole from the API server.

What is kept of a kind is declared with the kind (``Kind.projection``; the projections, each with
why, are at the top of kinds/table.py): pods keep of their spec and status only what summaries read,
workloads keep of their pod template only its containers' names and images (a replica set also
a fingerprint of it), nodes lose their images, events their reporting fields, config maps their
data. Dropped everywhere, here: ``metadata.managedFields`` and the
``kubectl.kubernetes.io/last-applied-configuration`` annotation (a second copy of the object,
often the largest part of it). Secrets are never cached; when listed through the API server they
are slimmed like any other object.
"""

from itertools import repeat
from sys import getrefcount, intern

from msgspec.json import encode as _json

from dashboard_api.cache.compact import compact, layouts

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _interned(mapping):
    """Label maps repeat across thousands of objects: one copy of each short string."""
    return {intern(k): intern(v) if isinstance(v, str) and len(v) <= 64 else v
            for k, v in mapping.items()}


def metadata(meta):
    """``meta`` without managedFields and the last-applied annotation, its short strings
    interned: a new dict, ``meta`` unchanged (the pass-through road's, whose records are not
    pooled)."""
    if not meta:
        return meta
    out = {intern(k): v for k, v in meta.items() if k != "managedFields"}
    annotations = out.get("annotations")
    if annotations:
        out["annotations"] = _interned({k: v for k, v in annotations.items()
                                        if k != LAST_APPLIED})
    if out.get("labels"):
        out["labels"] = _interned(out["labels"])
    if out.get("namespace"):
        out["namespace"] = intern(out["namespace"])
    return out


def slim(spec, obj):
    """The slim record of one object of the kind ``spec`` (None: a resource without a spec,
    kept whole but for its metadata); a new dict, ``obj`` unchanged."""
    out = spec.slim(obj) if spec is not None else dict(obj)
    if "metadata" in out:
        out["metadata"] = metadata(out["metadata"])
    return out


def slim_all(spec, objects):
    return [slim(spec, obj) for obj in objects]


def record(obj):
    """The slim record of an object already projected (by its kind's typed decoder, or
    Kind.slim): ``obj`` itself, managedFields and the last-applied annotation taken out of its
    metadata in place. The watch cache's road: the object is the worker's own, decoded for this
    record, and goes on to ``pooled``, which shares its values through the pools and copies
    every map it keeps into a compact map, whose keys are its layout's (cache/compact.py): no
    copy of the metadata and annotations is made here, nor any key interned (issue #41: both
    were done again for every object, and ``pooled`` copies them anyway)."""
    meta = obj.get("metadata")
    if meta:
        _object(meta).pop("managedFields", None)
        annotations = meta.get("annotations")
        if annotations:
            _object(annotations).pop(LAST_APPLIED, None)
    return obj


def _object(value):
    """``value`` when it is an object (a dict); else the error ``metadata`` raises on it, so
    that both roads fail an object alike (tests/unit/kinds/test_decoding.py)."""
    if type(value) is not dict:
        raise AttributeError("%r object has no attribute 'items'" % type(value).__name__)
    return value


# --- one copy of each repeated value in the cache (issue #19) --------------------------------
#
# The cache's records are long-lived and much of them repeats across objects: condition types
# and statuses, images, node and namespace names, owners, resource quantities, container names,
# whole small objects (a condition, a container's resources, an owner reference, a label map).
# A decoder makes a new string and a new dict (184 bytes at least) for each. ``pooled`` makes a
# record share them, in place: each string value becomes the pool's copy, and each object whose
# values are all shared (strings, numbers, such objects) becomes the pool's equal object. The
# record's bytes are unchanged. Values unique by nature (a uid, a name at the top of metadata, a
# time, an IP) are not pooled, nor an object holding one. An object is keyed by its JSON (a
# string by itself). The pool is bounded: when full it starts again (what is already shared
# stays shared) with what records share. An object's entry costs a few hundred bytes (its key:
# 130-530 bytes on average for the stand-in's kinds, issue #41; nested tuples of 840 before), a
# string's only its slot. Objects arrive in the API server's order (an app's pods together), so
# an object's copies are near each other and a pool of a few thousand entries finds them (issue
# #30: 60,000 pods held 1,521 bytes each at 1 << 13 entries, 1,518 at 1 << 16, whose pool of
# objects then held up to ~52 MiB, when a full pool started empty).
#
# Under churn the pool alone is not enough: it starts again every few thousand records, and a
# record made after that holds its own copies of what the pool no longer knows. So a changed
# object's record is pooled against the record it replaces (``pooled(record, previous)``):
# every part equal to the previous record's part at the same place is that part, unique values
# (its uid, name, times) included, and the pool serves the rest.
#
# The previous record is also what makes pooling cheap (issue #41): a part whose JSON is that of
# the previous record's part, when that part is the pool's, is taken whole (``_known``: one
# comparison and one encoding in C), not walked value by value. A new object's
# previous record is another object's: its neighbour's by name, or in a first LIST the record
# made just before it (an API server lists a replica set's pods together). So a listed heavy pod
# costs ~26% fewer instructions and keeps sharing through the pool's restarts.
#
# Shared objects are never changed: rows are immutable once made (cache/store.py), and every
# summary copies what it changes.
#
# A full pool starts again with the strings records share (``_next_generation``), not empty
# (issue #41, the hour's soak): a string two records hold (a node's or a namespace's name, a
# reason, a time many events have) stays; what one record holds (most of what enters: names, an
# object's own parts) is dropped, and at most a quarter of the pool is kept. Objects start
# again: an entry costs its JSON, and under churn a record shares its objects with the record
# it replaces. Emptied, a pool gave each record made after a restart its own copy of such
# strings, and a restart came every few seconds under the pods' churn: in tests/bench's
# composition at 30,000 pods, after 400 s of churn (75% of the events replaced), the events and
# pods held 0.9 MB more than the same objects listed afresh (their times, their rows' keys of
# time and namespace), the soak's growth; now 0.1 MB. A node's name recurs a node count of pods
# apart, farther than a pool's window: kept, it is shared by every pod and event on the node,
# listed or changed. With the pool at 1 << 14 entries (objects keep a window as wide as 1 << 13
# gave before), the same rows listed take 97.8 MB instead of 100.4 (the pools up to ~2 MB more).
#
# And a record's maps are compact (cache/compact.py): each map the record keeps for itself (its
# top level, a pod's metadata and annotations, its spec with its node) and each new map of the
# pools holds its values only, its keys shared with every map of the same keys (issue #41: a
# listed heavy pod's record and row 1,348 bytes instead of 1,831).

POOL_SIZE = 1 << 14
# a full pool keeps the strings held by at least KEEP_HOLDERS references beyond the pool's own,
# at most KEEP_MOST of them
KEEP_HOLDERS = 2
KEEP_MOST = POOL_SIZE // 4
UNIQUE = frozenset(("startedAt", "finishedAt", "lastTransitionTime", "lastProbeTime",
                    "lastHeartbeatTime", "lastUpdateTime", "lastTimestamp", "firstTimestamp",
                    "eventTime", "podIP", "podIPs", "ip", "containerID", "message", "startTime",
                    "creationTimestamp", "deletionTimestamp", "renewTime", "acquireTime"))
META_UNIQUE = UNIQUE | {"uid", "name", "resourceVersion", "selfLink"}
MAX_STRING = 256
_SCALARS = (int, float, bool, type(None))
_pool = {}
# id of an object of the pool -> (the object, its JSON: its key in the pool): a part the same
# as the previous record's (``_known``) is taken whole, without a walk
_keys = {}


_NONE = object()   # no previous value at this place


def _same_scalar(value, kind, prev):
    """Whether ``prev`` is ``value`` as JSON writes it (True is not 1, nor 1.0 1)."""
    return type(prev) is kind and (repr(prev) == repr(value) if kind is float else prev == value)


def _known(value, before):
    """Whether ``before`` is an object of the pool with the same JSON as ``value``. Then
    ``before`` is taken for ``value`` whole, as a walk of ``value`` would have found it part by
    part, at the cost of a comparison and an encoding in C (a pod's status and containers,
    equal to its neighbour's or its previous record's: a walk was a third of a listed pod's
    cost). Equal in Python is not enough (1 == 1.0 == True, and a dict's order): the JSON is
    compared too. An entry holds its object, so its id is never another's."""
    known = _keys.get(id(before))
    return known is not None and known[0] is before and before == value and \
        known[1] == _json(value)


def _next_generation(pool):
    """The pool to go on with once ``pool`` is full: its strings held by at least KEEP_HOLDERS
    references beyond the pool's own (records, or the pool's objects, that share them), at most
    KEEP_MOST of them, the most held first. Its objects start again (each entry costs its
    JSON). Made in C but for a few comprehensions, without a tuple per entry (a rotation takes
    a few milliseconds, once every ~12,000 new entries; sorting tuples woke the collector and
    cost ten times that): the list of keys is taken at once, as a worker may still add to
    ``pool``."""
    strings = [key for key in list(pool) if type(key) is str]
    # counted beyond the holders: the pool's key and value (a string is its own key), the list
    # ``strings`` and getrefcount's argument
    least = KEEP_HOLDERS + 4
    counts = list(map(getrefcount, strings))
    shared = sorted(count for count in counts if count >= least)
    if len(shared) <= KEEP_MOST:
        return {text: text for text, count in zip(strings, counts) if count >= least}
    # the most held: those held more than the KEEP_MOST-th, then as many held as much as it
    least = shared[-KEEP_MOST]
    kept = {text: text for text, count in zip(strings, counts) if count > least}
    for text in [text for text, count in zip(strings, counts) if count == least]:
        if len(kept) >= KEEP_MOST:
            break
        kept[text] = text
    return kept


def _pooled_as(value, pool, made=None):
    """The pool's object with the JSON of ``value`` (a dict or a list whose parts are shared),
    made ``value`` when there is none (``made(value)`` when given: a new map enters the pool
    compacted, cache/compact.py; the previous record's part is kept as it is). Keyed by that
    JSON: made in C, hashed once (a bytes object keeps its hash), and smaller than the nested
    tuples of names and values that keyed the pool before (whose hash was made again at each
    level: issue #41)."""
    known = _keys.get(id(value))
    if known is not None and known[0] is value:
        return value   # the pool's already (the previous record's part)
    key = _json(value)
    shared = pool.get(key)
    if shared is None:
        if made is not None:   # a new map, not the previous record's: compacted as it enters
            value = made(value)
        shared = pool.setdefault(key, value)
        if shared is value:
            _keys[id(value)] = (value, key)
    return shared


def _shared_list(values, pool, prev=_NONE):
    """Like ``_shared_dict``, for a list."""
    poolable = True
    if type(prev) is not list:
        prev = None
    same = prev is not None and len(prev) == len(values)
    for i, value in enumerate(values):
        before = prev[i] if prev is not None and i < len(prev) else _NONE
        kind = type(value)
        if kind is str:
            if type(before) is str and before == value:
                values[i] = value = before
            else:
                same = False
            if len(value) > MAX_STRING:
                poolable = False
                continue
            shared = pool.setdefault(value, value)
            if shared is not value:
                values[i] = shared
        elif kind is dict or kind is list:
            if _known(value, before):
                shared, sub = before, True
            elif kind is dict:
                shared, sub = _shared_dict(value, pool, UNIQUE, before)
            else:
                shared, sub = _shared_list(value, pool, before)
            if shared is not value:
                values[i] = shared
            same = same and shared is before
            poolable = poolable and sub
        elif kind in _SCALARS:
            same = same and _same_scalar(value, kind, before)
        else:
            same = poolable = False
    value = prev if same else values
    return (_pooled_as(value, pool), True) if poolable else (value, False)


def _shared_dict(mapping, pool, unique, prev=_NONE):
    """(the pool's object equal to ``mapping``, or ``mapping`` with its values shared; whether
    it is shareable: it holds no unique value, nor a string longer than MAX_STRING). ``prev``:
    the value at the same place in the object's previous record; when equal, it is the answer
    (then ``mapping`` is dropped)."""
    poolable = True
    if type(prev) is not dict:
        prev = None
    same = prev is not None and len(prev) == len(mapping)
    for name, value in mapping.items():
        before = prev.get(name, _NONE) if prev is not None else _NONE
        kind = type(value)
        if kind is str:
            if type(before) is str and before == value:
                mapping[name] = value = before   # unique values too: a uid, a time
            else:
                same = False
            if name in unique or len(value) > MAX_STRING:
                poolable = False
                continue
            shared = pool.setdefault(value, value)
            if shared is not value:
                mapping[name] = shared
        elif kind is dict or kind is list:
            if _known(value, before):
                shared, sub = before, True
            elif kind is list:
                shared, sub = _shared_list(value, pool, before)
            elif name == "labels" and unique is META_UNIQUE:
                shared, sub = _shared_labels(value, pool, before)
            else:
                shared, sub = _shared_dict(value, pool, UNIQUE, before)
            if shared is not value:
                mapping[name] = shared
            same = same and shared is before
            poolable = poolable and sub
        elif kind in _SCALARS:
            same = same and _same_scalar(value, kind, before)
        else:
            same = poolable = False
    if same and list(prev) == list(mapping):   # equal, and in the same order: the same JSON
        return (_pooled_as(prev, pool), True) if poolable else (prev, False)
    return (_pooled_as(mapping, pool, compact), True) if poolable else (compact(mapping), False)


# Label maps: the pool above starts again every few thousand records (most of what it holds is
# unique to one object), so under churn a record whose labels changed (a pod's, its tier) kept a
# map of its own where a listed one shares its replica set's: ~350 bytes a pod, +52 MiB at
# 150,000 pods once each had changed (issue #41's soak). They have a pool of their own, keyed by
# their items in order (one flat tuple of interned strings, ~200 bytes an entry), bounded the
# same way but larger: at most LABEL_MAPS maps (~13 MiB when every map is unique).
LABEL_MAPS = 1 << 16
_labels = {}
_STRINGS = repeat(str)


def _shared_labels(mapping, pool, prev=_NONE):
    """``_shared_dict`` of a label map (strings only, else as any map), from ``_labels``."""
    global _labels
    # strings only, in the same order: the same JSON (most pods: their neighbour's)
    if type(prev) is dict and prev == mapping and all(map(isinstance, prev.values(), _STRINGS)) \
            and list(prev) == list(mapping):
        return prev, False
    key = []
    for name, value in mapping.items():
        if type(value) is not str:
            return _shared_dict(mapping, pool, UNIQUE, prev)
        key.append(name)
        key.append(value)
    if len(_labels) > LABEL_MAPS:
        _labels = {}
    shared = _labels.get(tuple(key))
    if shared is None:   # a map met first: its strings interned
        shared = compact(_interned(mapping))
        shared = _labels.setdefault(tuple(v for item in shared.items() for v in item), shared)
    return shared, False


def pooled(record, previous=None):
    """``record`` (a slim record, changed in place) sharing its repeated values, as a compact
    map (cache/compact.py: the answer is a new dict holding ``record``'s values).

    ``previous``: the record this one replaces (the same object before a watch event or a
    re-list's change), whose parts are shared where they are equal. The pool alone would
    share them only while it still holds what the previous record shares: it starts again
    when full, and under churn a changed record would then hold its own copies of what did
    not change (issue #30: 30,000 pods, each changed twice, held 27% more blocks than the same
    pods listed afresh). A new object's ``previous`` is a record of another object of its
    kind, its neighbour (Cached.to_row): sharing is by equal JSON, so any record will do, and
    a neighbour's is the most alike."""
    global _pool, _keys
    if len(_pool) > POOL_SIZE:
        _pool, _keys = _next_generation(_pool), {}
    if type(previous) is not dict:
        previous = {}
    for name, value in record.items():
        before = previous.get(name, _NONE)
        if type(value) is dict:
            if _known(value, before):
                record[name] = before
                continue
            shared, _shareable = _shared_dict(
                value, _pool, META_UNIQUE if name == "metadata" else UNIQUE, before)
            if shared is not value:
                record[name] = shared
        elif type(value) is list:
            if _known(value, before):
                record[name] = before
                continue
            shared, _shareable = _shared_list(value, _pool, before)
            if shared is not value:
                record[name] = shared
        elif type(value) is str:
            if type(before) is str and before == value:
                record[name] = value = before
            if len(value) <= MAX_STRING:
                record[name] = _pool.setdefault(value, value)
    return compact(record)


# A row's sort and filter keys (cache/rows.py ``row_of``, query.properties.keys_of) repeat too: the
# text of a namespace, a status, a count made for each object. One copy of each string, in a pool
# of their own (names flow through it too), bounded and started again the same way.
_texts = {}


def tables():
    """How full the bounded tables of this module and of compact maps are, in entries, for the
    soak's memory report (the SIGUSR1 test hook, cache/watchcache.py): a soaked gateway fills
    them more than a fresh one does, and what they hold shows in the soak's growth."""
    return {"pool_entries": len(_pool), "label_maps": len(_labels), "texts": len(_texts),
            "layouts": layouts()}


def text_pool():
    """``setdefault`` of the pool of the rows' texts (query.properties.keys_of ``share``)."""
    global _texts
    if len(_texts) > POOL_SIZE:
        _texts = _next_generation(_texts)
    return _texts.setdefault
