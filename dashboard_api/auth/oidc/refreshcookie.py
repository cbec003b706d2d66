"""The refresh token, sealed into an HttpOnly cookie that page scripts never read.

The cookie holds ``[refresh token, subject, issued ms]`` sealed (AES-GCM, serving/sealing.py)
under a key derived for this purpose from the secret the replicas share: any replica refreshes
what another signed in, nothing is stored server-side, and the token inside is unreadable to
anyone without the secret. The subject binds a refreshed ID token to the person who signed in
(OpenID Connect Core 12.2: the new token's ``sub`` must be the same). Pure code.
"""

import time

import ujson

from dashboard_api.serving.sealing import Box

PURPOSE = b"dashboard-api oidc refresh token v1"
MAX_COOKIE_CHARS = 4096
# However long the provider lets a refresh token live, the cookie is dropped after this.
MAX_AGE = 12 * 3600


class RefreshCookies:
    def __init__(self, secret, clock=time.time, max_age=MAX_AGE):
        self._box = Box(secret, PURPOSE)
        self._clock = clock
        self.max_age = max_age

    def seal(self, refresh_token, subject, issued=None):
        """The cookie value; ``issued`` (Unix seconds) carries over from the first sign-in,
        so that refreshing never makes a session outlive ``max_age``."""
        issued = self._clock() if issued is None else issued
        return self._box.seal(ujson.dumps([refresh_token, subject, int(issued * 1000)])
                              .encode("utf-8"))

    def open(self, value):
        """(refresh token, subject, issued seconds), or None when the cookie is not ours,
        altered or older than ``max_age``."""
        opened = self._box.open(value, MAX_COOKIE_CHARS) if value else None
        try:
            token, subject, issued_ms = ujson.loads(opened[1])
        except (TypeError, ValueError):
            return None
        if not isinstance(token, str) or not isinstance(subject, str) \
                or not isinstance(issued_ms, int):
            return None
        issued = issued_ms / 1000.0
        if self._clock() - issued > self.max_age:
            return None
        return token, subject, issued
