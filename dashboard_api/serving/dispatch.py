"""The first route of a path found among the few that could match it, not by trying all.

Tornado matches a request's path against each URL spec's pattern in turn, first match wins.
With ~190 routes, most of them under ``/api/v1/``, a list request tried some 150 patterns
before its own: about a tenth of what a refresh answered "not modified" costs the gateway.

``Dispatch`` gives the same answer from far fewer tries. Each spec's pattern starts with a
run of literal text (``/api/v1/pod/`` of ``/api/v1/pod/(?P<namespace>[^/]+)/?$``); a path can
match a spec only if that text is a prefix of the path. A path's head (its first ``DEPTH``
segments, ``/api/v1/pod``) and a spec's literal text are then both prefixes of the path, so
one is a prefix of the other: the specs that could match a head are exactly those, kept in
Tornado's order. They are computed once per head that some spec names in full; a path with
any other head (an unknown kind, a probe, a file of the web UI) is left to Tornado's own scan,
so that the heads kept never grow with what clients send.
"""

from __future__ import annotations

from typing import Any, Sequence

DEPTH = 3                      # /api/v1/{kind}
_META = set(".^$*+?{}[]|()")
_OPTIONAL = set("*?{")         # quantifiers that let the character before them be absent


def literal_prefix(pattern: str) -> str:
    """The text every match of the anchored regular expression ``pattern`` starts with (a
    prefix of it: shorter when unsure; "" for a pattern of alternatives, ``/a|/b``)."""
    if _alternatives(pattern):
        return ""
    out = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1].isalnum():
                break          # a class (\d, \w...) or a back reference
            char = pattern[i + 1]
            step = 2
        elif char in _META:
            if char in _OPTIONAL and out:
                out.pop()      # "x?", "x*", "x{0,}": x may be absent
            break
        else:
            step = 1
        if i + step < len(pattern) and pattern[i + step] in _OPTIONAL:
            break              # the next character makes this one optional
        out.append(char)
        i += step
    return "".join(out)


def _alternatives(pattern: str) -> bool:
    """Whether ``pattern`` is split by a ``|`` outside any group or character class."""
    depth, in_class, i = 0, False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth <= 0:
            return True
        i += 1
    return False


def head(path: str) -> str:
    """The path's first DEPTH segments: ``/api/v1/pod`` of ``/api/v1/pod/ns/name``."""
    return "/".join(path.split("/", DEPTH + 1)[:DEPTH + 1])


class Dispatch:
    """The specs (Tornado URL specs, in the order Tornado tries them) that could match a path
    (see the module docstring)."""

    def __init__(self, specs: Sequence[Any]):
        # a rule matched otherwise than by a path pattern could match any path: "" says so
        prefixes = [(spec, literal_prefix(getattr(getattr(spec.matcher, "regex", None),
                                                  "pattern", ""))) for spec in specs]
        heads = {head(text[:text.rindex("/")]) for _, text in prefixes
                 if text.count("/") > DEPTH}   # DEPTH whole segments, then more
        self._candidates = {
            known: [spec for spec, text in prefixes
                    if known.startswith(text) or text.startswith(known)]
            for known in heads}

    def candidates(self, path: str) -> list | None:
        """The specs that could match ``path`` in Tornado's order, or None: ask Tornado."""
        return self._candidates.get(head(path))
