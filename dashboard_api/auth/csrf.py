"""CSRF tokens: signed, bound to one action, expiring and good for one use.

A token is ``base64url(nonce || mac) + ":" + issued_ms`` where
``mac = HMAC-SHA256(key, esc(action) + ":" + base64url(nonce) + ":" + issued_ms)`` and ``esc``
doubles every ``:``. Like upstream's tokens it ends in ``:<milliseconds>`` and is opaque to the UI;
unlike them it carries a random nonce, so that each token is distinct and can be spent once.

Every replica given the same key accepts the others' tokens. Spent nonces are remembered by the
process that saw them, until the token would have expired anyway; so a token is one-time per
replica, and a reuse across replicas is only stopped by expiry.

The spent store is bounded. When it is full the nonce closest to expiry is forgotten to make room
(expired ones go first, being the closest): refusing new tokens instead would let anyone who can
fetch and spend tokens block every POST, sign-in included.
"""

import base64
import binascii
import hashlib
import heapq
import hmac
import logging
import os
import secrets
import time

from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api.csrf")

NONCE_BYTES = 16
MAC_BYTES = 32
MIN_KEY_BYTES = 32
FUTURE_SKEW_MS = 60_000
# Spent nonces kept at most; beyond this the ones closest to expiry are forgotten.
MAX_SPENT = 200_000
# At most one warning per this many seconds about forgetting live nonces.
EVICTION_WARNING_PERIOD = 60.0

MESSAGE = "MSG_CSRF_VALIDATION_ERROR"


class CsrfKeyError(Exception):
    pass


class CsrfError(Exception):
    """Why a token was refused: missing, malformed, wrong-action, expired, future or reused."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason
        self.message = message


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _esc(text):
    return text.replace(":", "::")


def decode_key(text):
    """The raw HMAC key from its standard base64 text; refuses bad or short keys."""
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise CsrfKeyError("the CSRF key is not valid base64")
    if len(key) < MIN_KEY_BYTES:
        raise CsrfKeyError("the CSRF key must decode to at least %d bytes, got %d"
                           % (MIN_KEY_BYTES, len(key)))
    return key


def load_key(flag=None, path=None, env=None):
    """The signing key from the flag, else the file, else $CSRF_KEY, else a random one.

    Returns (key, source). A random key works for one process only: replicas then refuse each
    other's tokens, so the caller warns about it.
    """
    env = os.environ if env is None else env
    if flag:
        return decode_key(flag), "--csrf-key"
    if path:
        try:
            with open(path) as f:
                text = f.read()
        except OSError as exc:
            raise CsrfKeyError("cannot read --csrf-key-file %s: %s" % (path, exc.strerror))
        return decode_key(text), "--csrf-key-file"
    if env.get("CSRF_KEY"):
        return decode_key(env["CSRF_KEY"]), "$CSRF_KEY"
    return secrets.token_bytes(256), "random"


class CsrfTokens:
    """Issues and checks tokens. ``clock`` returns Unix time in seconds (injectable for tests)."""

    def __init__(self, key, ttl, clock=time.time, max_spent=MAX_SPENT):
        self._key = key
        self.ttl_ms = int(ttl * 1000)
        self._clock = clock
        self._max_spent = max_spent
        self._spent = set()
        self._expiries = []  # heap of (expiry ms, nonce), one entry per spent nonce
        self._warned_at = None

    def _now_ms(self):
        return int(self._clock() * 1000)

    def _mac(self, action, nonce, issued):
        message = "%s:%s:%d" % (_esc(action), _b64(nonce), issued)
        return hmac.new(self._key, message.encode("utf-8"), hashlib.sha256).digest()

    def issue(self, action):
        nonce = secrets.token_bytes(NONCE_BYTES)
        issued = self._now_ms()
        return "%s:%d" % (_b64(nonce + self._mac(action, nonce, issued)), issued)

    def check(self, action, token):
        """Spends ``token`` for ``action``; raises CsrfError when it must be refused."""
        if not token:
            raise CsrfError("Missing", "the X-CSRF-TOKEN header is missing")
        body, sep, stamp = token.rpartition(":")
        try:
            issued = int(stamp)
            raw = _unb64(body)
        except (ValueError, binascii.Error):
            raw, issued = b"", 0
        if not sep or len(raw) != NONCE_BYTES + MAC_BYTES:
            raise CsrfError("Malformed", "the CSRF token is malformed")
        nonce, mac = raw[:NONCE_BYTES], raw[NONCE_BYTES:]
        if not hmac.compare_digest(mac, self._mac(action, nonce, issued)):
            raise CsrfError("Invalid", "the CSRF token is not valid for action %r" % action)
        now = self._now_ms()
        if issued > now + FUTURE_SKEW_MS:
            raise CsrfError("Invalid", "the CSRF token was issued in the future")
        if now - issued >= self.ttl_ms:
            raise CsrfError("Expired", "the CSRF token has expired")
        self._spend(nonce, issued + self.ttl_ms, now)

    def _spend(self, nonce, expiry, now):
        if nonce in self._spent:
            raise CsrfError("Reused", "the CSRF token was already used")
        while self._expiries and (self._expiries[0][0] <= now
                                  or len(self._spent) >= self._max_spent):
            if self._expiries[0][0] > now:
                self._warn_eviction(now)
            self._spent.discard(heapq.heappop(self._expiries)[1])
        self._spent.add(nonce)
        heapq.heappush(self._expiries, (expiry, nonce))

    def _warn_eviction(self, now):
        if self._warned_at is None or now - self._warned_at >= EVICTION_WARNING_PERIOD * 1000:
            self._warned_at = now
            log.warning("more than %d CSRF tokens spent within their lifetime: forgetting the "
                        "oldest, which could now be replayed until they expire", self._max_spent)


class CsrfGuard:
    """What handlers use: tokens for an action, and validation unless --disable-csrf."""

    def __init__(self, tokens, enabled=True):
        self.tokens = tokens
        self.enabled = enabled

    def issue(self, action):
        return self.tokens.issue(action)

    def validate(self, action, header):
        if not self.enabled:
            return
        try:
            self.tokens.check(action, header)
        except CsrfError as exc:
            raise ApiError(401, MESSAGE, "Unauthorized",
                           details={"causes": [{"reason": exc.reason, "message": exc.message}]})
