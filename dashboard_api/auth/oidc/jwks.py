"""The provider's signing keys from its JWKS document (RFC 7517), as `cryptography` keys.

Only public signature keys are kept: RSA (``kty: RSA``) and EC on P-256, P-384 and P-521;
a key marked for encryption (``use: enc``), a symmetric key (``kty: oct``) or one with private
members is skipped, so that no secret the provider published by mistake is ever used to check
a signature. Pure code: no I/O. ``cryptography`` is imported by the first document parsed
(serving/sealing.py says why not before).
"""

import binascii

from dashboard_api.serving.sealing import unb64

CURVES = {"P-256": "SECP256R1", "P-384": "SECP384R1", "P-521": "SECP521R1"}   # cryptography's
PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")
# A provider publishes a handful of keys; more is refused rather than kept.
MAX_KEYS = 100
MIN_RSA_BITS = 2048


class Key:
    """One signing key: ``kid`` (may be None), ``kty`` (RSA or EC), ``crv`` (EC only),
    ``alg`` (None unless the JWK says), ``public`` the cryptography public key."""

    __slots__ = ("kid", "kty", "crv", "alg", "public")

    def __init__(self, kid, kty, crv, alg, public):
        self.kid, self.kty, self.crv, self.alg, self.public = kid, kty, crv, alg, public


def _int(jwk, name):
    value = jwk.get(name)
    if not isinstance(value, str) or not value:
        raise ValueError("missing %s" % name)
    try:
        return int.from_bytes(unb64(value), "big")
    except (binascii.Error, ValueError):
        raise ValueError("bad %s" % name)


def _key(jwk):
    """A Key, or None when ``jwk`` is not a public signature key we use."""
    if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
        return None
    if any(name in jwk for name in PRIVATE_MEMBERS):
        return None
    kid, alg, kty = jwk.get("kid"), jwk.get("alg"), jwk.get("kty")
    if kid is not None and not isinstance(kid, str) or alg is not None and not isinstance(alg, str):
        return None
    from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: PLC0415
    try:
        if kty == "RSA":
            public = rsa.RSAPublicNumbers(_int(jwk, "e"), _int(jwk, "n")).public_key()
            if public.key_size < MIN_RSA_BITS:
                return None
            return Key(kid, kty, None, alg, public)
        if kty == "EC" and jwk.get("crv") in CURVES:
            curve = getattr(ec, CURVES[jwk["crv"]])()
            public = ec.EllipticCurvePublicNumbers(_int(jwk, "x"), _int(jwk, "y"),
                                                   curve).public_key()
            return Key(kid, kty, jwk["crv"], alg, public)
    except ValueError:  # a bad number, or a point not on the curve
        return None
    return None


def parse(document):
    """The usable keys of a decoded JWKS document; ValueError when it is not one."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("the JWKS document has no list of keys")
    if len(document["keys"]) > MAX_KEYS:
        raise ValueError("the JWKS document has more than %d keys" % MAX_KEYS)
    return [key for key in map(_key, document["keys"]) if key is not None]
