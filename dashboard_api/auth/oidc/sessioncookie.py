"""The signed-in person's current ID token, sealed into an HttpOnly cookie of the whole gateway
(issue #39: one sign-in for every cluster).

A sign-in at any cluster's path (or at the root) leaves the ID token in the ``token`` cookie of
that cluster's web UI, which its page sends as the Bearer; every other cluster's UI has a
``token`` cookie of its own path, so that a token pasted into one never reaches another. The
ID token of a sign-in with the provider is for every cluster, though: this cookie keeps it for
the gateway (Path=/, HttpOnly: no page script reads it), sealed (AES-GCM, serving/sealing.py)
under a key of its own derived from the secret the replicas share, so that another cluster's
``/oidc/refresh`` sets that cluster's ``token`` cookie from it without a trip to the provider,
and nobody can plant a token of their own in it. Pure code.

A sealed ID token is about 1.4 times as long as the token: one too long for a cookie
(``MAX_COOKIE_CHARS``) is not kept here, and the other clusters then get theirs with the
refresh token (a call to the provider's token endpoint, still no sign-in page).
"""

from dashboard_api.serving.sealing import Box

PURPOSE = b"dashboard-api oidc session v1"
MAX_COOKIE_CHARS = 3900


class SessionCookies:
    def __init__(self, secret):
        self._box = Box(secret, PURPOSE)

    def seal(self, id_token):
        """The cookie's value, or None when the token is too long for a cookie."""
        value = self._box.seal(id_token.encode("utf-8"))
        return value if len(value) <= MAX_COOKIE_CHARS else None

    def open(self, value):
        """The ID token of a cookie we sealed, unaltered; else None."""
        opened = self._box.open(value, MAX_COOKIE_CHARS) if value else None
        try:
            return opened[1].decode("utf-8") if opened else None
        except UnicodeDecodeError:
            return None
