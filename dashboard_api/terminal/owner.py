"""Who opened a SockJS session: a per-session secret the opener holds as a cookie.

The request that opens a session over an HTTP transport gets a random nonce, and a cookie
``<nonce>.<MAC>`` where the MAC (HMAC-SHA256 under a key derived from the secret every replica
shares, as the shell ids' key is) binds the nonce to the session id. The session remembers the
nonce. A later request of the session must carry a cookie whose MAC is right for this session
id and whose nonce is the session's own: a cookie of another session, or one made up, or none,
is refused. The MAC needs no shared state (any replica checks it with the shared key); the
nonce ties the cookie to this one opening, so a cookie obtained by opening the same id on
another replica is still refused where the victim's session lives. Pure code: no I/O.
"""

import binascii
import hashlib
import hmac
import os

from dashboard_api.serving.sealing import b64, derive_key, unb64

COOKIE = "dashboard_terminal_owner"
PURPOSE = b"dashboard-api sockjs session owner v1"
NONCE_BYTES = 16
MAX_COOKIE_CHARS = 200


class Owners:
    def __init__(self, secret):
        self._key = derive_key(secret, PURPOSE)

    def _mac(self, session_id, nonce):
        return hmac.new(self._key, PURPOSE + b"\0" + session_id.encode("utf-8", "replace")
                        + b"\0" + nonce, hashlib.sha256).digest()

    def issue(self, session_id):
        """(cookie value, nonce) for the opener of `session_id`."""
        nonce = os.urandom(NONCE_BYTES)
        return b64(nonce) + "." + b64(self._mac(session_id, nonce)), nonce

    def check(self, session_id, value, nonce):
        """Whether cookie `value` proves its holder opened `session_id`, whose nonce is
        `nonce` (None: nobody may use the session)."""
        if not value or nonce is None or len(value) > MAX_COOKIE_CHARS or value.count(".") != 1:
            return False
        shown_nonce, shown_mac = value.split(".")
        try:
            given_nonce, given_mac = unb64(shown_nonce), unb64(shown_mac)
        except (binascii.Error, ValueError):
            return False
        if b64(given_nonce) != shown_nonce or b64(given_mac) != shown_mac:
            # Base64 decoding drops a last character's spare bits and stray characters: one
            # cookie has exactly one spelling, so an altered cookie never passes for the real one.
            return False
        return hmac.compare_digest(given_mac, self._mac(session_id, given_nonce)) \
            and hmac.compare_digest(given_nonce, nonce)
