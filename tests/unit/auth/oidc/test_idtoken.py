"""ID token verification (auth/oidc/idtoken.py, jwks.py) with keys the tests make: every
forgery and misuse of issue #29 item 6 is refused, and a good token passes."""

import time

import pytest

from dashboard_api.auth.oidc import idtoken, jwks
from tests.support import oidc

RSA = oidc.RsaKey("k1")
EC = oidc.EcKey("k2")
OTHER = oidc.RsaKey("k1")  # same kid, another key: a forger's
KEYS = jwks.parse({"keys": [RSA.jwk(), EC.jwk()]})
ALL = ("RS256", "ES256")


def verify(token, nonce="n-1", allowed=ALL, now=None):
    return idtoken.verify(idtoken.Parsed(token), KEYS, oidc.ISSUER, oidc.CLIENT,
                          time.time() if now is None else now, allowed, nonce)


def refused(token, message, **kwargs):
    with pytest.raises(idtoken.TokenError) as caught:
        verify(token, **kwargs)
    assert message in str(caught.value)
    return caught.value


def test_good_tokens_pass_with_rsa_and_ec():
    assert verify(oidc.token(RSA, oidc.claims()))["sub"] == "alice"
    assert verify(oidc.token(EC, oidc.claims()))["email"] == "alice@example.com"


def test_audience_list_needs_azp_of_ours():
    assert verify(oidc.token(RSA, oidc.claims(aud=["dashboard", "x"], azp="dashboard")))
    refused(oidc.token(RSA, oidc.claims(aud=["dashboard", "x"])), "authorized party")
    refused(oidc.token(RSA, oidc.claims(azp="x")), "authorized party")


def test_other_audience_refused():
    refused(oidc.token(RSA, oidc.claims(aud="kubectl")), "another audience")
    refused(oidc.token(RSA, oidc.claims(aud=None)), "another audience")


def test_other_issuer_refused():
    refused(oidc.token(RSA, oidc.claims(iss="https://evil.test")), "another issuer")


def test_expired_refused_past_the_leeway_only():
    now = time.time()
    assert verify(oidc.token(RSA, oidc.claims(exp=int(now) - 30)))  # within 60 s of skew
    refused(oidc.token(RSA, oidc.claims(exp=int(now) - 61)), "has expired")
    refused(oidc.token(RSA, oidc.claims(iat=int(now) + 120)), "in the future")
    refused(oidc.token(RSA, oidc.claims(exp="soon")), "has no exp")


def test_nonce_mismatch_refused():
    refused(oidc.token(RSA, oidc.claims(nonce="other")), "nonce")
    refused(oidc.token(RSA, oidc.claims(nonce=None)), "nonce")
    # On a refresh (no nonce expected) the provider may leave it out.
    assert verify(oidc.token(RSA, oidc.claims(nonce=None)), nonce=None)


def test_unknown_key_refused():
    refused(oidc.token(RSA, oidc.claims(), kid="k9"), "does not publish")
    assert isinstance(refused(oidc.token(RSA, oidc.claims(), kid="k9"), "key"),
                      idtoken.UnknownKey)


def test_forged_signature_with_a_known_kid_refused():
    refused(oidc.token(OTHER, oidc.claims()), "signature is not valid")


def test_tampered_payload_refused():
    head, _, sig = oidc.token(RSA, oidc.claims()).split(".")
    payload = oidc.b64(b'{"iss":"%s","aud":"dashboard","sub":"admin","exp":9999999999,'
                       b'"iat":1,"nonce":"n-1"}' % oidc.ISSUER.encode())
    refused(".".join((head, payload, sig)), "signature is not valid")


def test_alg_none_refused():
    refused(oidc.unsigned(oidc.claims()), "signed with none, which is not allowed")


def test_hs256_with_the_public_key_refused_even_if_allowed_by_mistake():
    forged = oidc.hs256_with_public_key(RSA, oidc.claims())
    refused(forged, "not allowed")
    refused(forged, "not allowed", allowed=("HS256", "RS256"))


def test_alg_must_fit_the_key():
    # An RSA-signed token claiming ES256 finds no EC key of that kid.
    refused(oidc.token(RSA, oidc.claims(), alg="ES256"), "does not publish")
    # A token signed by an allowed algorithm that the flags do not allow.
    refused(oidc.token(EC, oidc.claims()), "ES256, which is not allowed", allowed=("RS256",))


def test_malformed_tokens_refused():
    for bad in ("", "a.b", "a.b.c.d", "!!.e30.e30", "e30.e30.!!", "x" * 20000,
                oidc.b64(b"[1]") + ".e30.", oidc.token(RSA, oidc.claims()) + "="):
        with pytest.raises(idtoken.TokenError):
            verify(bad)


def test_jwks_skips_private_symmetric_and_encryption_keys():
    private = dict(RSA.jwk(), d="AQAB")
    keys = jwks.parse({"keys": [private, {"kty": "oct", "k": "c2VjcmV0"},
                                dict(EC.jwk(), use="enc"), {"kty": "RSA", "n": "AQAB", "e": "AQAB"},
                                dict(EC.jwk(), x="AQAB"), "junk", RSA.jwk()]})
    assert [(k.kid, k.kty) for k in keys] == [("k1", "RSA")]
    with pytest.raises(ValueError):
        jwks.parse({"keys": [RSA.jwk()] * 101})
    with pytest.raises(ValueError):
        jwks.parse([])
