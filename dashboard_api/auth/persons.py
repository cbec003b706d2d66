"""Who a person is, once the gateway itself has verified their ID token (issue #39).

A cluster in ``impersonate`` mode cannot trust the organisation's provider, so the gateway
verifies the ID token as the sign-in does (signature, ``iss``, ``aud``, ``azp``, ``exp``,
``iat``: auth/oidc/idtoken.py) and names the person as that cluster's API server would have
named them had it trusted the provider: the username and groups claims with the prefixes of
``--oidc-username-prefix`` and ``--oidc-groups-prefix``, which mean what the API server's flags
of those names mean. The same naming serves the audit trail and ``/api/v1/me`` on every
cluster.

``Persons.resolve(token)`` is None for a token that does not name the configured issuer (a
service account's token, a cluster's own token, anything opaque): such a token is forwarded
as it is and the cluster judges it. A token that names the issuer but fails a check (expired,
forged, for another audience) is a 401: the gateway never lets it through to be read as
something else. A verified person is remembered by a SHA-256 of their token until the token
expires (at most ``MAX_PERSONS`` of them, least recently used first), so a request pays for a
signature check once per token, not once per call.

Names the API server keeps for itself are never impersonated: a username starting with
``system:`` is refused, and groups starting with ``system:`` are dropped (the person then
gets fewer rights than the token claims, never more), so that a provider's group named
``system:masters`` cannot make anyone a cluster administrator through the gateway's right to
impersonate.
"""

from __future__ import annotations

import hashlib
import time

import cachetools

from dashboard_api.auth.oidc.idtoken import LEEWAY, Parsed, TokenError
from dashboard_api.auth.oidc.relyingparty import SignInError
from dashboard_api.serving.errors import ApiError, unauthorized

MAX_PERSONS = 10000
MAX_GROUPS = 256
MAX_NAME_CHARS = 512
SYSTEM_PREFIX = "system:"
# The API server's default for --oidc-username-prefix when it is unset: the issuer and "#",
# unless the username claim is "email". "-" says: no prefix at all.
NO_PREFIX = "-"


class Person:
    """A verified person: ``name`` and ``groups`` as the cluster's RBAC sees them,
    ``subject`` (the ``sub`` claim), ``expires`` (Unix seconds, the token's ``exp``)."""

    __slots__ = ("name", "groups", "subject", "expires")

    def __init__(self, name, groups, subject, expires):
        self.name = name
        self.groups = tuple(groups)
        self.subject = subject
        self.expires = expires

    def impersonation(self):
        """The header lines naming this person to an API server: one ``Impersonate-User``
        and one ``Impersonate-Group`` line per group (a repeated header, as the API server
        reads it; "a,b" in one line would be one group named "a,b")."""
        return (("Impersonate-User", self.name),) + tuple(
            ("Impersonate-Group", group) for group in self.groups)

    def __repr__(self):
        return "Person(%r, %r)" % (self.name, self.groups)


class Naming:
    """The API server's naming of an OIDC user (its ``--oidc-username-claim``,
    ``--oidc-username-prefix``, ``--oidc-groups-claim``, ``--oidc-groups-prefix``). Pure."""

    def __init__(self, issuer, username_claim="sub", groups_claim="groups",
                 username_prefix=None, groups_prefix=None):
        self.issuer = issuer
        self.username_claim = username_claim
        self.groups_claim = groups_claim
        if username_prefix is None:
            username_prefix = "" if username_claim == "email" else issuer + "#"
        self.username_prefix = "" if username_prefix == NO_PREFIX else username_prefix
        self.groups_prefix = groups_prefix or ""

    def username(self, claims):
        """The user name, or TokenError when the claims do not give a usable one."""
        name = claims.get(self.username_claim)
        if not isinstance(name, str) or not name:
            raise TokenError("the ID token has no %s claim" % self.username_claim)
        if self.username_claim == "email" and "email_verified" in claims \
                and claims["email_verified"] is not True:
            # As the API server: an email the provider has not verified names nobody.
            raise TokenError("the ID token's email is not verified")
        name = self.username_prefix + name
        if len(name) > MAX_NAME_CHARS:
            raise TokenError("the ID token's user name is too long")
        if name.startswith(SYSTEM_PREFIX):
            raise TokenError("the ID token names a system: user, which is never impersonated")
        return name

    def groups(self, claims):
        """The groups, prefixed; those of the API server's own (system:...) left out."""
        value = claims.get(self.groups_claim)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return ()
        if len(value) > MAX_GROUPS:
            raise TokenError("the ID token lists more than %d groups" % MAX_GROUPS)
        out = []
        for group in value:
            if not isinstance(group, str) or not group or len(group) > MAX_NAME_CHARS:
                continue
            group = self.groups_prefix + group
            if not group.startswith(SYSTEM_PREFIX) and group not in out:
                out.append(group)
        return tuple(out)

    def person(self, claims):
        return Person(self.username(claims), self.groups(claims), claims.get("sub"),
                      claims.get("exp"))


def names_issuer(token, issuer):
    """Whether ``token`` is a JWT whose (unverified) ``iss`` is ``issuer``: only those are
    verified here; anything else is some cluster's business."""
    try:
        return Parsed(token).claims.get("iss") == issuer
    except TokenError:
        return False


class Persons:
    """``resolve(token)``: the verified Person of an ID token of the configured provider,
    None for any other token; a 401 ApiError for an ID token of the provider that fails a
    check. ``signin``: auth.oidc.SignIn (its relying party verifies)."""

    def __init__(self, signin, naming, clock=time.time, size=MAX_PERSONS):
        self.signin = signin
        self.naming = naming
        self._clock = clock
        self._known = cachetools.TLRUCache(
            size, ttu=lambda _key, person, now: person.expires + LEEWAY, timer=clock)
        self.verified = 0   # signature checks made (the rest came from the memory)

    @property
    def issuer(self):
        return self.naming.issuer

    def names_issuer(self, token):
        return names_issuer(token, self.issuer)

    async def resolve(self, token):
        if not token or not self.names_issuer(token):
            return None
        key = hashlib.sha256(token.encode("utf-8")).digest()
        person = self._known.get(key)
        if person is not None:
            return person
        try:
            claims = await self.signin.rp.verify(token)
            person = self.naming.person(claims)
        except (SignInError, TokenError) as exc:
            raise unauthorized("the ID token is refused: %s" % exc) from None
        self.verified += 1
        self._known[key] = person
        return person

    async def resolve_quietly(self, token):
        """``resolve``, with None instead of a 401 (for naming a caller in the audit trail
        after the fact, never for deciding what they may do)."""
        try:
            return await self.resolve(token)
        except ApiError:
            return None


def make(signin, options):
    """The Persons of the gateway's sign-in (None without one)."""
    if signin is None:
        return None
    settings = signin.settings
    naming = Naming(settings.issuer, settings.username_claim, settings.groups_claim,
                    getattr(options, "oidc_username_prefix", None),
                    getattr(options, "oidc_groups_prefix", None))
    return Persons(signin, naming)
