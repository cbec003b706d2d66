"""Verification of an ID token as a relying party must (OpenID Connect Core 3.1.3.7).

The signature first, by one of the provider's keys, with an algorithm from an allow-list of
public-key algorithms: ``none`` and the HMAC algorithms (HS*) are never accepted, so a token
"signed" with the provider's public key as an HMAC secret, or not signed, never passes. The key
must fit the algorithm (RSA for RS*/PS*, the curve of ES*). Then the claims: ``iss`` is the
issuer, ``aud`` holds the client id (and ``azp``, when present or when there are several
audiences, is the client id), ``exp`` and ``iat`` within a small leeway, and ``nonce`` is the one
this sign-in sent. Pure code: the keys come from the caller (provider.py fetches them).

``cryptography`` is imported by the first check (serving/sealing.py says why not before).
"""

import binascii
import hmac
import re

from dashboard_api.serving import bounded
from dashboard_api.serving.sealing import b64, unb64

HASHES = {"256": "SHA256", "384": "SHA384", "512": "SHA512"}   # names in cryptography's hashes
EC_CURVES = {"ES256": ("P-256", 32), "ES384": ("P-384", 48), "ES512": ("P-521", 66)}
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
DEFAULT_ALGORITHMS = ("RS256", "ES256")
# An ID token travels in a cookie and a header: a few kilobytes. Longer ones are refused unread.
MAX_TOKEN_CHARS = 16 * 1024
LEEWAY = 60  # seconds of clock skew tolerated on exp and iat


class TokenError(ValueError):
    """Why a token is refused (safe to show: it names a check, never the token)."""


class UnknownKey(TokenError):
    """No key of the provider has the token's ``kid``: the caller may refetch the keys once."""


def _part(text, what):
    try:
        raw = unb64(text)
    except (binascii.Error, ValueError):
        raise TokenError("the ID token's %s is not base64url" % what)
    if b64(raw) != text:
        raise TokenError("the ID token's %s is not base64url" % what)
    return raw


def _json_object(raw, what):
    try:
        value = bounded.json_loads(raw, max_depth=20)
    except bounded.InputError:
        raise TokenError("the ID token's %s is not JSON" % what)
    if not isinstance(value, dict):
        raise TokenError("the ID token's %s is not a JSON object" % what)
    return value


class Parsed:
    """A token split and decoded, not yet trusted: ``header``, ``claims``, and what the
    signature covers."""

    def __init__(self, token):
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS:
            raise TokenError("the ID token is missing or too long")
        parts = token.split(".")
        if len(parts) != 3:
            raise TokenError("the ID token is not a signed JWT")
        self.header = _json_object(_part(parts[0], "header"), "header")
        self.claims = _json_object(_part(parts[1], "payload"), "payload")
        self.signature = _part(parts[2], "signature")
        self.signed = (parts[0] + "." + parts[1]).encode("ascii")

    @property
    def kid(self):
        kid = self.header.get("kid")
        return kid if isinstance(kid, str) else None


def _fits(key, alg):
    if key.alg is not None and key.alg != alg:
        return False
    if alg.startswith(("RS", "PS")):
        return key.kty == "RSA"
    return key.kty == "EC" and key.crv == EC_CURVES[alg][0]


def choose_key(parsed, keys, alg):
    """The key that must have signed ``parsed``: the one of its ``kid``, else the only key
    fitting ``alg``. UnknownKey when none is."""
    fitting = [k for k in keys if _fits(k, alg)]
    if parsed.kid is not None:
        fitting = [k for k in fitting if k.kid == parsed.kid]
    if len(fitting) != 1:
        raise UnknownKey("the ID token is signed with a key the provider does not publish")
    return fitting[0]


def check_signature(parsed, key, alg):
    # imported at the first check, not at start-up
    from cryptography.exceptions import InvalidSignature  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec, padding  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric.utils import (  # noqa: PLC0415
        encode_dss_signature)
    digest = getattr(hashes, HASHES[alg[2:]])()
    try:
        if alg.startswith("RS"):
            key.public.verify(parsed.signature, parsed.signed, padding.PKCS1v15(), digest)
        elif alg.startswith("PS"):
            key.public.verify(parsed.signature, parsed.signed,
                              padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
        else:
            size = EC_CURVES[alg][1]
            if len(parsed.signature) != 2 * size:
                raise InvalidSignature()
            r = int.from_bytes(parsed.signature[:size], "big")
            s = int.from_bytes(parsed.signature[size:], "big")
            key.public.verify(encode_dss_signature(r, s), parsed.signed, ec.ECDSA(digest))
    except InvalidSignature:
        raise TokenError("the ID token's signature is not valid")


def algorithm(parsed, allowed):
    alg = parsed.header.get("alg")
    if alg not in allowed or alg not in ALGORITHMS:
        shown = alg if isinstance(alg, str) and re.fullmatch(r"[A-Za-z0-9]{1,20}", alg) \
            else "an algorithm"
        raise TokenError("the ID token is signed with %s, which is not allowed (allowed: %s)"
                         % (shown, ", ".join(allowed)))
    return alg


def _number(claims, name):
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TokenError("the ID token has no %s" % name)
    return value


def check_claims(claims, issuer, client_id, now, nonce=None, leeway=LEEWAY):
    """Raises TokenError unless the claims are for us, now; ``nonce``: the one sent (None on
    a refresh, where the provider may omit it)."""
    if claims.get("iss") != issuer:
        raise TokenError("the ID token was issued by another issuer")
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if client_id not in audiences:
        raise TokenError("the ID token is for another audience")
    azp = claims.get("azp")
    if (azp is not None or len(audiences) > 1) and azp != client_id:
        raise TokenError("the ID token is for another authorized party")
    if _number(claims, "exp") <= now - leeway:
        raise TokenError("the ID token has expired")
    if _number(claims, "iat") > now + leeway:
        raise TokenError("the ID token was issued in the future")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise TokenError("the ID token has no subject")
    if nonce is not None:
        got = claims.get("nonce")
        if not isinstance(got, str) or not hmac.compare_digest(got.encode(), nonce.encode()):
            raise TokenError("the ID token's nonce is not the one this sign-in sent")


def verify(parsed, keys, issuer, client_id, now, allowed=DEFAULT_ALGORITHMS, nonce=None,
           leeway=LEEWAY):
    """The claims of a token whose signature and claims pass; TokenError (UnknownKey when the
    key is not among ``keys``) otherwise."""
    alg = algorithm(parsed, allowed)
    check_signature(parsed, choose_key(parsed, keys, alg), alg)
    check_claims(parsed.claims, issuer, client_id, now, nonce, leeway)
    return parsed.claims
