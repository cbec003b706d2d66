"""A list page's validator (its ``ETag``), known before the page is built.

A page answered from the watch cache is a function of what the road read before the page is
taken, and of nothing else:

- **who asks**: the identity of the caller's credentials (the hash of the token and the
  impersonation headers, lists/access.py ``Access.identity``): access answers are kept per
  identity, so two callers never share a tag, whatever their rights;
- **what was asked**: the kind, the namespaces the road settled on (for a caller who may not
  list cluster-wide, the namespaces where they may: a right granted or taken changes them) and
  every field of the query;
- **what was read**: the version of the rows' store in those namespaces (cache/view.py
  ``StoreView.version``: a change in another namespace leaves it) and of every related read
  (their ``view_key``); a related read the caller was refused is in the errors, and the errors
  are part of the tag;
- **what the decorators add**: each says what its additions depend on (``version``: the
  metrics decorator the sidecar's newest scrape);
- **this pipeline**: every tag is keyed by a random key of the Pipeline, so a tag of another
  replica, of a process restarted or of a cluster let go and started again never matches.

When any of these has no version (rows or a related read from a LIST made now, a decorator
that cannot say, a kind whose page reads per row), there is no validator: the page is built
and the answer keeps the tag of its body. A validator never says less than the page shows:
the page is read after it, from stores at that version or newer.

``Recent`` keeps, per caller and page, the validator last given and what it was made of
(``Proof``s: the rows' store version in the namespaces, each related read's, each decorator's
version as it stands, and the caller's access answers as the access cache keeps them), so a
caller holding it is answered "not modified" while every proof still holds, with nothing read:
no discovery, no access review asked, no related read. A proof that fails (a change, an access
answer past its TTL, a sidecar scrape due) sends the request down the road, which makes the
validator again.
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
from typing import Any, Callable, Iterable, Mapping

import cachetools

# Tags are weak: equal tags mean the same page, not the same bytes (metrics read after the tag
# may be a newer scrape than it names).
WEAK = 'W/"%s"'
# Pages whose validators are remembered (Recent), the least recently used dropped first, and
# for at most RECENT_SECONDS each (the access answers they rest on last less).
RECENT = 10000
RECENT_SECONDS = 60.0


class Validators:
    """The tags of one pipeline's pages (see the module docstring)."""

    def __init__(self, key: bytes | None = None):
        self._key = key if key is not None else os.urandom(32)

    def tag(self, *parts: Any) -> str:
        """The weak entity tag of ``parts`` (values whose repr is stable: str, int, None,
        tuples and lists of them, dicts in insertion order), keyed by this pipeline's key."""
        digest = hashlib.blake2b(repr(parts).encode("utf-8"), key=self._key,
                                 digest_size=18).digest()
        return WEAK % base64.urlsafe_b64encode(digest).decode("ascii")


def read_versions(list_needs: Iterable[str], rel: Mapping[str, Any],
                  refused: Mapping[str, Any]) -> tuple | None:
    """The versions of a list's related reads (``rel`` under each of ``list_needs``), or None
    when one has none: read from the API server now, it may differ next time. A read the
    caller was refused is empty and named in the errors (``refused``); a read not made (a list
    of no rows reads nothing) has nothing to compare."""
    versions = []
    for need in list_needs:
        if need not in rel:
            versions.append(None)
            continue
        version = getattr(rel[need], "view_key", None)
        if version is None:
            if need not in refused:
                return None
            version = "refused"
        versions.append(version)
    return tuple(versions)


class Proof:
    """One thing a validator was made of: ``now()`` must still give ``was``."""

    __slots__ = ("now", "was")

    def __init__(self, now: Callable[[], Any], was: Any):
        self.now = now
        self.was = was

    def holds(self) -> bool:
        return self.now() == self.was


class Recent:
    """Validators recently given, per (caller, page): (tag, proofs, stores whose staleness the
    answer reports). See the module docstring."""

    def __init__(self, size: int = RECENT, seconds: float = RECENT_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self._kept = cachetools.TTLCache(size, seconds, timer=clock)
        self.hits = 0

    def __len__(self) -> int:
        return len(self._kept)

    def remember(self, key: Any, tag: str, proofs: list, stores: tuple) -> None:
        self._kept[key] = (tag, tuple(proofs), stores)

    def forget(self, key: Any) -> None:
        self._kept.pop(key, None)

    def held(self, key: Any, held: Any, holds: Callable[[Any, str], bool]) -> tuple | None:
        """(tag, stores) of ``key`` when the request holds its tag (``holds(held, tag)``)
        and every proof still holds; else None."""
        found = self._kept.get(key)
        if found is None or not holds(held, found[0]):
            return None
        if not all(proof.holds() for proof in found[1]):
            return None
        self.hits += 1
        return found[0], found[2]
