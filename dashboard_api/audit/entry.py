"""One audit entry: who changed what, where, and how it went (issue #39). Pure code.

An entry is a dict of the fields below, the same in the log's JSON line, in the database and in
``GET /api/v1/audit``:

``id`` (random, so that an entry written twice after a lost answer is stored once), ``time``
(RFC 3339, UTC, milliseconds), ``cluster``, ``user`` (as the gateway knows them),
``userVerified`` and ``userSource`` (how the name is known: ``oidc``, the gateway verified the
ID token; ``apiserver``, the API server named the user in its answer; ``token``, the ``sub``
claim of a token the API server accepted for this very write; ``claim``, the same claim of a
token the write never got past (not verified); ``unknown``), ``client`` (the client's address as
far as it can be relied on: forwarded-for headers only from ``--trusted-proxies``), ``route``
(the route's name, ``terminal`` for a shell), ``method``, the object (``kind``, ``group``,
``resource``, ``namespace``, ``name``), ``status`` (the HTTP status answered), ``reason`` (the
API server's reason, or ours, on a failure) and ``message`` (its message, cut at
``MAX_MESSAGE``), ``requestId``, and ``details`` (a small object: a terminal's container and
event, the impersonated user, ...).

Nothing a request body carries goes into an entry beyond names of objects: never data, tokens,
keystrokes or output.
"""

from __future__ import annotations

import datetime
import os
import re

import ujson

MAX_MESSAGE = 500
MAX_FIELD = 253 * 2   # a namespace and a name of the longest, or a long user name
FIELDS = ("id", "time", "cluster", "user", "userVerified", "userSource", "client", "route",
          "method", "kind", "group", "resource", "namespace", "name", "status", "reason",
          "message", "requestId", "details")
# The API server names the user in every refusal of authorization.
_NAMED = re.compile(r'\bUser "([^"]{1,512})" cannot ')


class Target:
    """The object a change is about: ``kind`` (as Kubernetes spells it), ``group`` and
    ``resource`` (the plural: what the visibility check asks the API server about; "" when
    the request never named a known one), ``namespace`` ("" for cluster-scoped objects),
    ``name``."""

    __slots__ = ("kind", "group", "resource", "namespace", "name")

    def __init__(self, kind, group, resource, namespace="", name=""):
        self.kind = kind or ""
        self.group = group or ""
        self.resource = resource or ""
        self.namespace = namespace or ""
        self.name = name or ""

    def __repr__(self):
        return "Target(%r, %r, %r, %r, %r)" % (self.kind, self.group, self.resource,
                                               self.namespace, self.name)


def new_id():
    return os.urandom(12).hex()


def rfc3339(seconds):
    """``2026-11-28T06:01:02.345Z`` of Unix ``seconds``."""
    return rfc3339_ms(int(seconds * 1000))


def rfc3339_ms(millis):
    """The RFC 3339 time of Unix milliseconds, exactly."""
    whole, milli = divmod(int(millis), 1000)
    moment = datetime.datetime.fromtimestamp(whole, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % milli


_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d)[Tt](\d\d:\d\d:\d\d)(\.\d{1,9})?([Zz]|[+-]\d\d:\d\d)")


def millis_of(text):
    """Unix milliseconds of an RFC 3339 time (``Z`` or an offset; a fraction of a second
    cut to milliseconds); ValueError otherwise."""
    match = _RFC3339.fullmatch(text) if isinstance(text, str) and len(text) <= 40 else None
    if not match:
        raise ValueError("not an RFC 3339 time")
    day, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in ("Z", "z") else zone
    moment = datetime.datetime.fromisoformat("%sT%s%s" % (day, clock, zone))
    milli = int((fraction or ".0")[1:4].ljust(3, "0"))
    return int(moment.timestamp()) * 1000 + milli


def user_named_by(message):
    """The user an API server's refusal names, or None."""
    match = _NAMED.search(message or "")
    return match.group(1) if match else None


def who(person=None, token_subject=None, impersonated=None, status=0, message=""):
    """(user, verified, source, details) of a change (see the module doc): ``person`` the
    gateway verified (auth.persons.Person), the ``sub`` claim of the bearer token, the
    client's own ``Impersonate-User`` (forward mode), the status answered and the message of
    a refusal."""
    if person is not None:
        return person.name, True, "oidc", {}
    named = user_named_by(message) if status == 403 else None
    if named is not None:
        return named, True, "apiserver", {}
    details = {}
    name = token_subject
    if impersonated:
        details["impersonatedBy"] = token_subject or "unknown"
        name = impersonated
    if not name:
        return "unknown", False, "unknown", details
    accepted = 200 <= status < 400
    return name, accepted, "token" if accepted else "claim", details


def _cut(value, limit=MAX_FIELD):
    value = "" if value is None else str(value)
    return value if len(value) <= limit else value[:limit]


def make(now, cluster, user, verified, source, client, route, method, target, status,
         reason="", message="", request_id="", details=None):
    """A new entry (see the module doc)."""
    return {
        "id": new_id(), "time": rfc3339(now), "cluster": _cut(cluster), "user": _cut(user),
        "userVerified": bool(verified), "userSource": source, "client": _cut(client, 100),
        "route": _cut(route, 100), "method": _cut(method, 10), "kind": _cut(target.kind, 100),
        "group": _cut(target.group, 253), "resource": _cut(target.resource, 100),
        "namespace": _cut(target.namespace), "name": _cut(target.name), "status": int(status),
        "reason": _cut(reason, 100), "message": _cut(message, MAX_MESSAGE),
        "requestId": _cut(request_id, 100), "details": details or {},
    }


def json_line(entry):
    """The entry as one line of JSON, for log shippers."""
    return ujson.dumps(entry, ensure_ascii=False, escape_forward_slashes=False)
