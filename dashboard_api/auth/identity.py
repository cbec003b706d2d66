"""Who a token belongs to, as far as the token itself says (for GET /api/v1/me).

The JWT payload is decoded WITHOUT verifying its signature: the API server has already accepted
the token, and the name is only shown to its owner. Bound service-account tokens carry the name at
``kubernetes.io.serviceaccount.name``; legacy secret-based ones at
``kubernetes.io/serviceaccount/service-account.name``. Upstream searched the payload in a
nondeterministic order and missed legacy tokens; both paths are looked up directly here.
"""

from dashboard_api.serving.bearer import unverified_claims


def service_account_name(token):
    """The service account's name carried by ``token``, or None."""
    payload = unverified_claims(token)
    if payload is None:
        return None
    bound = payload.get("kubernetes.io")
    if isinstance(bound, dict):
        account = bound.get("serviceaccount")
        if isinstance(account, dict) and isinstance(account.get("name"), str):
            return account["name"]
    legacy = payload.get("kubernetes.io/serviceaccount/service-account.name")
    return legacy if isinstance(legacy, str) else None
