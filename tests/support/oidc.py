"""Keys and ID tokens the tests make, and a stand-in provider for the relying party's unit
tests (the end-to-end tests use a real provider: tests/oidc/)."""

import base64
import hashlib
import hmac
import json
import time
import urllib.parse

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

ISSUER = "https://idp.test"
CLIENT = "dashboard"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _n(value, size=None):
    size = size or (value.bit_length() + 7) // 8
    return b64(value.to_bytes(size, "big"))


class RsaKey:
    def __init__(self, kid, bits=2048):
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=bits)

    def jwk(self):
        numbers = self.private.public_key().public_numbers()
        return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
                "n": _n(numbers.n), "e": _n(numbers.e)}

    def sign(self, data, alg="RS256"):
        return self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())


class EcKey:
    def __init__(self, kid):
        self.kid = kid
        self.private = ec.generate_private_key(ec.SECP256R1())

    def jwk(self):
        numbers = self.private.public_key().public_numbers()
        return {"kty": "EC", "kid": self.kid, "crv": "P-256",
                "x": _n(numbers.x, 32), "y": _n(numbers.y, 32)}

    def sign(self, data, alg="ES256"):
        r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(hashes.SHA256())))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def claims(**overrides):
    now = int(time.time())
    out = {"iss": ISSUER, "aud": CLIENT, "sub": "alice", "iat": now, "exp": now + 300,
           "nonce": "n-1", "email": "alice@example.com", "groups": ["viewers"]}
    out.update(overrides)
    return {k: v for k, v in out.items() if v is not None}


def token(key, payload, alg=None, kid=None, header=None):
    """A compact JWS of ``payload`` signed by ``key`` (an RsaKey or EcKey)."""
    alg = alg or ("RS256" if isinstance(key, RsaKey) else "ES256")
    head = {"alg": alg, "typ": "JWT", "kid": key.kid if kid is None else kid}
    head.update(header or {})
    signed = b64(json.dumps(head).encode()) + "." + b64(json.dumps(payload).encode())
    return signed + "." + b64(key.sign(signed.encode()))


def hs256_with_public_key(key, payload):
    """The classic confusion attack: HS256 keyed with the RSA public key's PEM."""
    from cryptography.hazmat.primitives import serialization
    pem = key.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                serialization.PublicFormat.SubjectPublicKeyInfo)
    head = {"alg": "HS256", "typ": "JWT", "kid": key.kid}
    signed = b64(json.dumps(head).encode()) + "." + b64(json.dumps(payload).encode())
    return signed + "." + b64(hmac.new(pem, signed.encode(), hashlib.sha256).digest())


def unsigned(payload, kid="k1"):
    head = {"alg": "none", "typ": "JWT", "kid": kid}
    return b64(json.dumps(head).encode()) + "." + b64(json.dumps(payload).encode()) + "."


class FakeProvider:
    """Answers the relying party's fetches as a provider would: discovery, the JWKS, the token
    endpoint (codes are one-time and bound to their PKCE challenge and nonce)."""

    def __init__(self, keys, issuer=ISSUER):
        self.issuer = issuer
        self.keys = list(keys)
        self.signer = self.keys[0]
        self.calls = []
        self.codes = {}
        self.refresh_tokens = {}
        self.lifetime = 300
        self.discovery = {
            "issuer": issuer, "authorization_endpoint": issuer + "/auth",
            "token_endpoint": issuer + "/token", "jwks_uri": issuer + "/jwks",
            "end_session_endpoint": issuer + "/session/end",
            "token_endpoint_auth_methods_supported": ["client_secret_basic"]}

    def grant(self, query, sub="alice", **extra):
        """The code the provider would give after a sign-in with the authorization URL's
        ``query`` (a dict)."""
        code = "code-%d" % len(self.codes)
        self.codes[code] = (query["code_challenge"], query["nonce"], sub, extra)
        return code

    def _id_token(self, sub, nonce=None, **extra):
        now = int(time.time())
        payload = claims(sub=sub, nonce=nonce, iat=now, exp=now + self.lifetime)
        payload.update(extra)
        return token(self.signer, payload)

    async def fetch(self, url, form=None, basic=None):
        self.calls.append((url, dict(form or {}), basic))
        if url == self.issuer + "/.well-known/openid-configuration":
            return 200, dict(self.discovery)
        if url == self.issuer + "/jwks":
            return 200, {"keys": [k.jwk() for k in self.keys]}
        if url == self.issuer + "/token":
            return self._token(form)
        return 404, None

    def _token(self, form):
        if form.get("grant_type") == "authorization_code":
            entry = self.codes.pop(form.get("code"), None)
            if entry is None:
                return 400, {"error": "invalid_grant"}
            challenge, nonce, sub, extra = entry
            verifier = form.get("code_verifier", "")
            if b64(hashlib.sha256(verifier.encode()).digest()) != challenge:
                return 400, {"error": "invalid_grant"}
            refresh = "rt-%s-%d" % (sub, len(self.refresh_tokens))
            self.refresh_tokens[refresh] = sub
            return 200, {"id_token": self._id_token(sub, nonce, **extra),
                         "refresh_token": refresh, "token_type": "Bearer"}
        if form.get("grant_type") == "refresh_token":
            sub = self.refresh_tokens.pop(form.get("refresh_token"), None)
            if sub is None:
                return 400, {"error": "invalid_grant"}
            refresh = "rt-%s-%d" % (sub, len(self.refresh_tokens) + 100)
            self.refresh_tokens[refresh] = sub
            return 200, {"id_token": self._id_token(sub), "refresh_token": refresh}
        return 400, {"error": "unsupported_grant_type"}


def query_of(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
