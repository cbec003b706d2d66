"""The Bearer rule of the specification, and what a bearer token says of itself (unverified)."""

from __future__ import annotations

import base64
import binascii

import ujson

PREFIX = "Bearer "


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None.

    Accepted only when the header starts with exactly ``Bearer `` and the rest is not empty.
    """
    if not header or not header.startswith(PREFIX):
        return None
    token = header[len(PREFIX):].strip()
    return token or None


def unverified_claims(token: str) -> dict | None:
    """The payload of a JWT ``token`` as a dict, or None: NOT verified, so only for showing a
    token's owner what it says, or for the log line of a request the API server accepted."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        payload = ujson.loads(raw)
    except (binascii.Error, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


def subject(token: str) -> str | None:
    """The ``sub`` claim of a JWT ``token`` (for a service account's token, the user name
    ``system:serviceaccount:<namespace>:<name>``), or None. Unverified: for the audit line of
    requests the API server has accepted."""
    payload = unverified_claims(token)
    sub = payload.get("sub") if payload else None
    return sub if isinstance(sub, str) and sub else None


def expiry(token: str | None) -> float | None:
    """The ``exp`` claim (Unix seconds) of a JWT ``token``, or None (not a JWT, no expiry).
    Unverified: for a token the API server has accepted before (the same bytes), whose signed
    claims are then its own, e.g. to refuse an ID token past its expiry while the API server
    cannot be asked (lists/access.py)."""
    payload = unverified_claims(token) if token else None
    exp = payload.get("exp") if payload else None
    if isinstance(exp, bool) or not isinstance(exp, (int, float)):
        return None
    return float(exp)
