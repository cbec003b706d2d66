"""Who a token belongs to, as far as the token itself says (for GET /api/v1/me).

The JWT payload is decoded WITHOUT verifying its signature: the API server has already accepted
the token, and the name is only shown to its owner. Bound service-account tokens carry the name at
``kubernetes.io.serviceaccount.name``; legacy secret-based ones at
``kubernetes.io/serviceaccount/service-account.name``. Upstream searched the payload in a
nondeterministic order and missed legacy tokens; both paths are looked up directly here.
"""

import base64
import binascii

import ujson


def _payload(token):
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        payload = ujson.loads(raw)
    except (binascii.Error, ValueError):
        return None
    return payload if isinstance(payload, dict) else None


def service_account_name(token):
    """The service account's name carried by ``token``, or None."""
    payload = _payload(token)
    if payload is None:
        return None
    bound = payload.get("kubernetes.io")
    if isinstance(bound, dict):
        account = bound.get("serviceaccount")
        if isinstance(account, dict) and isinstance(account.get("name"), str):
            return account["name"]
    legacy = payload.get("kubernetes.io/serviceaccount/service-account.name")
    return legacy if isinstance(legacy, str) else None


def subject(token):
    """The ``sub`` claim of a JWT ``token`` (for a service account's token, the user name
    ``system:serviceaccount:<namespace>:<name>``), or None. Unverified: for the audit line of
    requests the API server has accepted."""
    payload = _payload(token)
    sub = payload.get("sub") if payload else None
    return sub if isinstance(sub, str) and sub else None
