"""Conditional GETs (RFC 9110 section 13): the entity tags a request says it holds, and the
headers of an answer a browser may keep and must ask again about.

An answer a browser may keep is ``Cache-Control: private, no-cache``: kept in the browser's own
cache only (never a shared one), and asked about again on every use with ``If-None-Match``;
it varies with the caller's credentials (``Vary``), so a cache never hands one person's copy
to another's request. Whether a tag still holds is the caller's business (lists/validators.py
for lists); this module only reads the header, bounded.
"""

from __future__ import annotations

import re

# The Cache-Control of an answer the browser may keep but must revalidate on every use.
REVALIDATE = "private, no-cache"
# The request headers an answer depends on beside its URL: the credentials (the bearer token,
# the sign-in's cookie) and who they impersonate.
VARY = "Authorization, Cookie, Impersonate-User, Impersonate-Group, Impersonate-Uid"

# Tags read from one If-None-Match header, at most; a header is bounded by the server's
# header size already, this bounds the set made of it.
MAX_TAGS = 32
ANY = "*"

_TAG = re.compile(r'\*|(?:W/)?"([^"]{0,200})"')


def held_tags(header: str | None) -> frozenset[str]:
    """The opaque tags of an ``If-None-Match`` header (weak and strong alike: a GET compares
    them weakly), at most MAX_TAGS; ``ANY`` for ``*``; empty for no header or nothing valid."""
    if not header:
        return frozenset()
    tags = set()
    for found in _TAG.finditer(header):
        tags.add(ANY if found.group(0) == "*" else found.group(1))
        if len(tags) >= MAX_TAGS:
            break
    return frozenset(tags)


def opaque(tag: str) -> str:
    """The opaque part of an entity tag (``W/"x"`` or ``"x"`` -> ``x``)."""
    if tag.startswith("W/"):
        tag = tag[2:]
    return tag.strip('"')


def holds(held: frozenset[str], tag: str | None) -> bool:
    """Whether a request holding ``held`` (``held_tags``) has the answer tagged ``tag``."""
    return tag is not None and bool(held) and (ANY in held or opaque(tag) in held)
