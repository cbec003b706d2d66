"""The properties a list is filtered and sorted by, and each object's keys for them (pure).

A list names its properties with a mapping ``{name: Property}``; ``COMMON`` holds the ones every
list exposes (name, creationTimestamp, namespace). ``keys_of`` reads an item's keys once (the
watch cache: once per change); every filter and sort compares those keys (query/rows.py).
"""

import datetime
import math


class Property:
    """How to read one filter/sort property from a list item (a wire dict). ``time``: its sort
    value is the time's Unix seconds; ``few``: its values are few (a status, a reason, a
    type), so a sort by it is read off the list order by counting them (cache/categories.py)."""

    __slots__ = ("get", "time", "few")

    def __init__(self, get, time=False, few=False):
        self.get = get
        self.time = time
        self.few = few


def _meta(field):
    return lambda item: item["objectMeta"].get(field) or ""


COMMON = {
    "name": Property(_meta("name")),
    "creationTimestamp": Property(lambda item: item["objectMeta"].get("creationTimestamp"),
                                  time=True),
    "namespace": Property(_meta("namespace")),
}


def properties(**extra):
    """COMMON plus a list's own properties (a value of None removes a common one)."""
    props = dict(COMMON)
    for name, prop in extra.items():
        if prop is None:
            props.pop(name, None)
        else:
            props[name] = prop
    return props


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_ZERO_TIME = -62135596800  # Go's zero time in Unix seconds: unset times sort first


def unix_seconds(value):
    """Whole Unix seconds of an RFC 3339 time (fractions dropped); unset or bad -> zero time.
    The last time read is kept: an object's times are often the same (an event's first and
    last seen, and its creation), and the watch cache reads them for every object."""
    global _last
    last = _last   # one tuple, read and replaced whole: workers share it
    if value == last[0]:
        return last[1]
    seconds = _seconds(value)
    if type(value) is str:
        _last = (value, seconds)
    return seconds


def _seconds(value):
    if not value:
        return _ZERO_TIME
    try:
        t = _from_iso(value.replace("Z", "+00:00"))
    except (ValueError, TypeError, AttributeError):
        return _ZERO_TIME
    if t.tzinfo is None:
        t = t.replace(tzinfo=datetime.timezone.utc)
    return math.floor(t.timestamp())   # (t - epoch) in seconds, as a float, floored


_from_iso = datetime.datetime.fromisoformat
_last = (None, _ZERO_TIME)


def keys_of(item, props, share=None):
    """(filter text, sort value, filter text, sort value, ...) of a list item, each property of
    ``props`` in its order: what filter_rows and sort_rows compare, computed once per object
    (the watch cache computes it once per change). Every filter and sort runs on these keys:
    there is one implementation, the rows'. One flat tuple read by position (``position``), not
    a dict of pairs: the watch cache keeps one per object (104 bytes for four properties,
    against 184 for the dict and 56 for each pair not shared). ``share(text, text)``, when
    given, gives the one copy of each text (the watch cache's pool, cache/slim.py
    ``text_pool``); a text that is its property's sort value is that copy too."""
    keys = []
    append = keys.append
    for prop in props.values():
        value = prop.get(item)
        value_text = "" if value is None else value if isinstance(value, str) else str(value)
        if share is not None:
            value_text = share(value_text, value_text)
        append(value_text)
        append(unix_seconds(value) if prop.time else value_text)
    return tuple(keys)


def position(props, name):
    """Where property ``name``'s filter text is in ``keys_of(item, props)``; its sort value is
    next."""
    return 2 * list(props).index(name)


