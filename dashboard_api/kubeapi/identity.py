"""The identity of a caller's credentials: a digest of the token and the impersonation lines.

Whatever the gateway keeps per caller (a client of --cache-enabled, access answers, page
validators, coalesced LISTs) is keyed by it, so that two callers never share an entry and the
token itself is neither kept as a key nor printed.
"""

import hashlib


def identity_key(token, impersonation):
    """Equal for equal sets of impersonation lines (``((name, value), ...)`` or a dict),
    whatever their order (two groups are the same identity in either order); lines, not a
    dict, so that every group counts."""
    digest = hashlib.sha256(token.encode("utf-8"))
    for name, value in sorted((str(k).lower(), str(v)) for k, v in _lines(impersonation)):
        digest.update(b"\0" + name.encode("utf-8") + b"\0" + value.encode("utf-8"))
    return digest.hexdigest()


def _lines(impersonation):
    if not impersonation:
        return ()
    return impersonation.items() if hasattr(impersonation, "items") else impersonation
