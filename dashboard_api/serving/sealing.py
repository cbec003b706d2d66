"""Sealed terminal session ids: what a bind needs, encrypted so that any replica can open it.

A replica that issues a shell id remembers nothing another replica would need: the id itself
carries the namespace, pod, container, shell choice, the caller's token (and impersonation
headers) and the issue time, sealed with AES-GCM under a key derived (HKDF-SHA256) from the
secret the replicas already share for CSRF. Any replica holding the secret opens it; nobody
else can read the token inside or change a byte without the id being refused.

The id is ``base64url(nonce || ciphertext || tag)``, without padding: URL-safe, about 1.4 times
the token's length plus 60 characters. Pure code: no I/O, no Tornado.

The impersonation headers are kept as the caller sent them: every line, in order, repeated
names included (``Impersonate-Group`` once per group, ``Impersonate-Extra-*`` once per value).
The exec then runs with exactly the lines the pre-check (the SelfSubjectAccessReview of
``pods/exec``) was made with; keeping one value per name would let the exec run as another
identity than the one checked.

``via_gateway`` marks a ticket of a cluster in ``impersonate`` mode whose impersonation lines
the gateway made itself from a person it verified (auth/persons.py): the exec then runs with
the gateway's own credentials and those lines. Only a ticket the gateway sealed says so, and a
replica binds it only for a cluster in that mode (terminal/endpoint.py); every other ticket
runs with the token it carries.
"""

import base64
import binascii
import hashlib
import hmac
import os

import ujson

NONCE_BYTES = 12
# Binds the key and the ciphertext to this one use: a CSRF token or another sealed value made
# from the same secret can never pass for a shell id.
PURPOSE = b"dashboard-api terminal session id v2"
# Longer ids are refused before any decoding (a token is a few kilobytes at most).
MAX_ID_CHARS = 16 * 1024


class Ticket:
    """What a bind needs. ``issued`` is Unix time in seconds (from the issuing replica)."""

    __slots__ = ("namespace", "pod", "container", "shell", "token", "impersonation", "issued",
                 "via_gateway")

    def __init__(self, namespace, pod, container, shell, token, impersonation, issued,
                 via_gateway=False):
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.shell = shell
        self.token = token
        self.impersonation = impersonation_lines(impersonation)
        self.issued = issued
        self.via_gateway = bool(via_gateway)

    def _fields(self):
        fields = [self.namespace, self.pod, self.container, self.shell, self.token,
                  [list(line) for line in self.impersonation], int(self.issued * 1000)]
        return fields + [True] if self.via_gateway else fields

    @classmethod
    def _from_fields(cls, fields):
        via_gateway = False
        if isinstance(fields, list) and len(fields) == 8:   # sealed for impersonate mode
            via_gateway = fields.pop()
            if via_gateway is not True:
                raise ValueError("malformed ticket")
        namespace, pod, container, shell, token, impersonation, issued_ms = fields
        if not all(isinstance(v, str) for v in (namespace, pod, container, token)) \
                or not isinstance(shell, (str, type(None))) \
                or not isinstance(impersonation, list) or not isinstance(issued_ms, int) \
                or not all(isinstance(line, list) and len(line) == 2
                           and all(isinstance(part, str) for part in line)
                           for line in impersonation):
            raise ValueError("malformed ticket")
        return cls(namespace, pod, container, shell, token, impersonation, issued_ms / 1000.0,
                   via_gateway)


def impersonation_lines(impersonation):
    """((name, value), ...) in order, from lines or (for callers that have one value per name)
    a dict."""
    if not impersonation:
        return ()
    items = impersonation.items() if hasattr(impersonation, "items") else impersonation
    return tuple((str(name), str(value)) for name, value in items)


def derive_key(secret, purpose=PURPOSE):
    """A 256-bit key for ``purpose`` from the shared secret (the CSRF key's bytes): the
    sealing key by default; another purpose (the SockJS owner cookie) gets a key of its own.

    HKDF-SHA256 (RFC 5869) without a salt, one block, written out with the standard library: the
    ``cryptography`` package costs a process ~7.5 MiB, and a gateway nobody opens a shell on or
    signs in to never needs it (``Box`` imports it at its first use)."""
    prk = hmac.new(b"\0" * 32, secret, hashlib.sha256).digest()
    return hmac.new(prk, purpose + b"\1", hashlib.sha256).digest()


def b64(data):
    """Unpadded URL-safe base64, as ids and cookies carry it."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Box:
    """AES-GCM under a key derived from the shared secret for one ``purpose`` (also the
    associated data): whatever one replica seals, any replica holding the secret opens, and
    nothing sealed for another purpose ever opens here. Sealed text is
    ``base64url(nonce || ciphertext || tag)`` without padding."""

    def __init__(self, secret, purpose):
        self.purpose = purpose
        self._key = derive_key(secret, purpose)
        self._made = None

    def _aead(self):
        if self._made is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415
            self._made = AESGCM(self._key)
        return self._made

    def seal(self, plain):
        """The sealed text of ``plain`` (bytes); every call gives a different text."""
        nonce = os.urandom(NONCE_BYTES)
        return b64(nonce + self._aead().encrypt(nonce, plain, self.purpose))

    def open(self, text, max_chars=MAX_ID_CHARS):
        """(nonce, plain bytes) of a text we sealed, unaltered; None otherwise."""
        if not isinstance(text, str) or len(text) > max_chars:
            return None
        try:
            raw = unb64(text)
        except (binascii.Error, ValueError):
            return None
        # The decoder skips foreign characters and ignores the last one's spare bits: only the
        # canonical spelling is accepted, so that no altered text ever opens.
        if len(raw) <= NONCE_BYTES + 16 or b64(raw) != text:
            return None
        nonce = raw[:NONCE_BYTES]
        aead = self._aead()
        from cryptography.exceptions import InvalidTag  # noqa: PLC0415 (imported by _aead)
        try:
            return nonce, aead.decrypt(nonce, raw[NONCE_BYTES:], self.purpose)
        except InvalidTag:
            return None


class Sealer:
    """Seals tickets for one cluster: ``cluster`` (its name) is bound into the purpose, so an
    id sealed for one cluster never opens on another."""

    def __init__(self, secret, cluster=""):
        self._box = Box(secret, PURPOSE + (b" cluster " + cluster.encode() if cluster else b""))

    def seal(self, ticket):
        """The id of `ticket`; every call gives a different id (a random nonce)."""
        return self._box.seal(ujson.dumps(ticket._fields(), ensure_ascii=True).encode("ascii"))

    def open(self, session_id):
        """(nonce, Ticket) from an id; None when it is not one we sealed, unaltered."""
        opened = self._box.open(session_id)
        if opened is None:
            return None
        try:
            return opened[0], Ticket._from_fields(ujson.loads(opened[1]))
        except (ValueError, TypeError):
            return None


def nonce_of(session_id):
    """The nonce of an id this process sealed (it names the id without holding the token)."""
    return unb64(session_id)[:NONCE_BYTES]
