"""One sign-in in flight: state, nonce and PKCE verifier, sealed into a short-lived cookie.

The browser that starts a sign-in gets a cookie holding ``[state, nonce, verifier, return path,
issued ms, base]`` sealed (AES-GCM, serving/sealing.py) under a key of its own derived from the
secret the replicas share: any replica can finish a sign-in another began, nothing is stored,
and nobody can read the verifier or forge a cookie. The callback must bring the same ``state``
as the cookie, within ``FLOW_TTL``; the cookie is dropped by the callback whatever happens, so a
callback replayed in the same browser finds none. PKCE (RFC 7636, S256) binds the code to this
browser's verifier: a code intercepted on the way back is useless elsewhere. ``base`` is the
path of the web UI the sign-in is for (``/``, or ``/clusters/{name}/`` with several clusters):
the callback, at the one configured redirect URL, sets the session cookies for that path only
and returns within it. Pure code.
"""

import hashlib
import hmac
import os
import time
import urllib.parse

import ujson

from dashboard_api.serving.sealing import Box, b64

PURPOSE = b"dashboard-api oidc sign-in flow v1"
FLOW_TTL = 600  # seconds a person has at the provider's sign-in page
MAX_COOKIE_CHARS = 4096
MAX_RETURN_CHARS = 1024


def random_text(size=32):
    return b64(os.urandom(size))


def challenge(verifier):
    """The S256 code challenge of a PKCE verifier."""
    return b64(hashlib.sha256(verifier.encode("ascii")).digest())


def safe_return(path, base="/"):
    """``path`` when it is a path of this origin ("/..." but not "//..." nor "/\\...") within
    ``base`` (a path ending in "/"; ``base`` without its last slash counts as within), else
    ``base``: a sign-in never ends on another site (no open redirect), nor on the page of
    another cluster than the one it signed in to."""
    if not isinstance(path, str) or len(path) > MAX_RETURN_CHARS or not path.startswith("/") \
            or path.startswith(("//", "/\\")) or any(c < " " or c == "\\" for c in path):
        return base
    if base != "/" and not (path.startswith(base) or path == base[:-1]
                            or path.startswith(base[:-1] + "?")):
        return base
    if base != "/" and _dot_segments(path):
        return base   # "/clusters/b/../a/" is another cluster's page once the browser reads it
    return path


def _dot_segments(path):
    """Whether the path part of ``path`` has a "." or ".." segment (also percent-encoded, as
    browsers read them)."""
    head = path.split("?", 1)[0].split("#", 1)[0]
    return any(urllib.parse.unquote(seg) in (".", "..") for seg in head.split("/"))


class Flow:
    __slots__ = ("state", "nonce", "verifier", "return_to", "issued", "base")

    def __init__(self, state, nonce, verifier, return_to, issued, base="/"):
        self.state, self.nonce, self.verifier = state, nonce, verifier
        self.return_to, self.issued, self.base = return_to, issued, base

    @classmethod
    def start(cls, return_to, now, base="/"):
        return cls(random_text(), random_text(), random_text(), safe_return(return_to, base),
                   now, base)


class FlowError(ValueError):
    """Why a callback is refused (shown to the person on the refusal page)."""


class Flows:
    def __init__(self, secret, clock=time.time, ttl=FLOW_TTL):
        self._box = Box(secret, PURPOSE)
        self._clock = clock
        self.ttl = ttl

    def start(self, return_to, base="/"):
        """(Flow, cookie value) of a new sign-in for the web UI at ``base``."""
        flow = Flow.start(return_to, self._clock(), base)
        fields = [flow.state, flow.nonce, flow.verifier, flow.return_to, int(flow.issued * 1000),
                  flow.base]
        return flow, self._box.seal(ujson.dumps(fields).encode("utf-8"))

    def finish(self, cookie, state):
        """The Flow of ``cookie`` when ``state`` is its state and it is recent; FlowError."""
        if not cookie:
            raise FlowError("this browser has no sign-in in progress (it may have been "
                            "finished already, or started in another browser)")
        opened = self._box.open(cookie, MAX_COOKIE_CHARS)
        try:
            fields = ujson.loads(opened[1]) if opened else None
            flow_state, nonce, verifier, return_to, issued_ms, base = fields
            assert all(isinstance(v, str) for v in (flow_state, nonce, verifier, return_to,
                                                    base))
            assert base.startswith("/") and base.endswith("/")
            assert isinstance(issued_ms, int)
        except (ValueError, TypeError, AssertionError):
            raise FlowError("the sign-in cookie is not one this dashboard made")
        if self._clock() - issued_ms / 1000.0 > self.ttl:
            raise FlowError("the sign-in took longer than %d minutes" % (self.ttl // 60))
        if not isinstance(state, str) or \
                not hmac.compare_digest(state.encode("utf-8", "replace"), flow_state.encode()):
            raise FlowError("the answer of the identity provider is not for the sign-in this "
                            "browser started")
        return Flow(flow_state, nonce, verifier, safe_return(return_to, base),
                    issued_ms / 1000.0, base)
