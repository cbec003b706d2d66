"""Request and response logging.

Every request is logged when it arrives and when its response is sent, with the client address
taken from X-Original-Forwarded-For, X-Forwarded-For, X-Real-Ip, then the peer (as the
specification says: the log shows what the request claims; no decision trusts these headers
unless the peer is one of --trusted-proxies, see proxies.py). Headers are never logged.

Bodies are logged only at debug level, and never a byte that may be secret, whatever the
verbosity: the body of any request that may carry a Secret (the raw resource routes, secret
create, deploy from file, and any body holding an object of kind Secret) is shown only as its
size; other bodies are shown as JSON with every credential-like field redacted, annotations
included (``kubectl.kubernetes.io/last-applied-configuration`` repeats a whole object, Secret
data and all). The sign-in calls (/api/v1/login, /api/v1/csrftoken/login) show their content
only at debug, and tokens, kubeconfigs, passwords, secret data and terminal keystrokes never
reach the log at all. The libraries' own debug loggers that would print bodies or headers
(urllib3's, the kubernetes client's, http.client's) are held at INFO (quiet_library_loggers).

Terminal (SockJS) URLs carry the SockJS session id, which lets whoever knows it poll that
shell's xhr transport: they are logged as /api/sockjs/<server>/<fingerprint>/<transport>, the
session id replaced by a fingerprint (a short hash, enough to follow one session through the
log, useless to reach it), without query. Tornado's and sockjs-tornado's own records get the
same treatment from TornadoLogFilter, which also drops the detail of malformed requests
(Tornado quotes the offending header, which may be an Authorization header).
"""

import hashlib
import logging
import re
import urllib.parse

import ujson

from dashboard_api.serving.bearer import bearer_token, subject

log = logging.getLogger("dashboard_api.requests")

REDACTED = "<redacted>"
# Keys whose values are credentials or may hold secret data (Secret data, deploy-file content).
SENSITIVE_KEYS = frozenset(("token", "password", "kubeconfig", "authorization", "data",
                            "stringdata", "content", "certificate", "key", "annotations",
                            "binarydata"))
# Routes whose bodies may carry secret data in any field: only their size is ever logged.
_SECRET_BODY_PATHS = re.compile(r"/api/v1/(?:_raw/|secret(?:/|$)|appdeploymentfromfile(?:/|$))")
# Library loggers whose debug records print request or response bodies or headers.
LIBRARY_LOGGERS = ("urllib3", "kubernetes", "kubernetes.client.rest", "requests_oauthlib",
                   "oauthlib", "google.auth", "tornado.curl_httpclient")
MAX_BODY_CHARS = 2000
# Terminal traffic carries keystrokes (passwords typed into a shell): never shown.
TERMINAL_PREFIX = "/api/sockjs"
_TERMINAL_URL = re.compile(re.escape(TERMINAL_PREFIX) + r"(?:/[^\s?]*)?(?:\?\S*)?")
# sockjs-tornado's own words when a session is claimed from another address.
_SESSION_CLAIM = re.compile(r"(Attempted to attach to session )(\S{1,200})")
# Loggers of records we do not write ourselves but that may carry what must not be logged.
TORNADO_LOGGERS = ("tornado.general", "tornado.access", "tornado.application")


def client_address(headers, peer):
    """The original client: first forwarded-for entry, else X-Real-Ip, else the peer."""
    for name in ("X-Original-Forwarded-For", "X-Forwarded-For"):
        first = (headers.get(name) or "").split(",")[0].strip()
        if first:
            return first
    real = (headers.get("X-Real-Ip") or "").strip()
    return real or peer or "unknown"


def redact(value):
    """A copy of a decoded JSON value with every sensitive field's value replaced."""
    if isinstance(value, dict):
        return {k: REDACTED if str(k).lower() in SENSITIVE_KEYS else redact(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _holds_secret(value, depth=0):
    """Whether a decoded JSON value holds an object of kind Secret (at any depth: a List)."""
    if depth > 64:
        return True  # too deep to tell: assume it does
    if isinstance(value, dict):
        if str(value.get("kind", "")).lower() == "secret":
            return True
        return any(_holds_secret(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_holds_secret(v, depth + 1) for v in value)
    return False


def describe_body(path, body):
    """What the debug log may show of a request body: its JSON with sensitive values redacted,
    or only its size when it may carry secret data."""
    if path.startswith(TERMINAL_PREFIX):
        return "<%d bytes of terminal traffic>" % len(body)
    if _SECRET_BODY_PATHS.match(path):
        return "<%d bytes, not shown: may carry secret data>" % len(body)
    try:
        decoded = ujson.loads(body)
    except (ValueError, OverflowError):
        return "<%d bytes, not JSON>" % len(body)
    if _holds_secret(decoded):
        return "<%d bytes, not shown: may carry secret data>" % len(body)
    text = ujson.dumps(redact(decoded), ensure_ascii=False, escape_forward_slashes=False)
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS] + "...(%d chars)" % len(text)
    return text


def fingerprint(secret_id):
    """What the log shows of a shell or SockJS session id: a short hash, enough to follow one
    session through the log (and from the replica that issued a shell id to the one that bound
    it), nothing that reaches or binds it."""
    return hashlib.sha256(secret_id.encode("utf-8", "replace")).hexdigest()[:12]


def terminal_path(uri):
    """A terminal URL with its SockJS session id as a fingerprint, without query."""
    parts = uri.split("?", 1)[0].split("/")
    if len(parts) >= 5 and parts[4]:  # "", "api", "sockjs", server, session[, transport]
        parts[4] = "fp-" + fingerprint(parts[4])
    return "/".join(parts)


def hide_terminal_ids(text):
    """``text`` with every terminal URL in it shown by terminal_path."""
    return _TERMINAL_URL.sub(lambda m: terminal_path(m.group(0)), text)


def _shown_path(path):
    return terminal_path(path) if path.startswith(TERMINAL_PREFIX) else path


# An OpenID Connect callback's code (and its state) would let whoever reads the log finish a
# sign-in in the right browser's stead: never shown.
OAUTH_QUERY_NAMES = frozenset(("code", "state", "session_state"))


def describe_uri(request):
    """The path and query, with the value of any token-like query parameter redacted.

    Terminal URLs carry the terminal session id in their query (and the SockJS session id in
    their path): whoever holds it may bind that shell, so neither is shown."""
    if not request.query or request.path.startswith(TERMINAL_PREFIX):
        return _shown_path(request.path)
    if _plain(request.query):   # nothing in it could be redacted: shown as it came
        return request.path + "?" + request.query
    pairs = urllib.parse.parse_qsl(request.query, keep_blank_values=True)
    shown = [(k, REDACTED if any(s in k.lower() for s in ("token", "password", "key"))
              or k.lower() in OAUTH_QUERY_NAMES else v) for k, v in pairs]
    return request.path + "?" + urllib.parse.urlencode(shown, safe="<>,")


# Words of the query names describe_uri redacts (and of OAUTH_QUERY_NAMES).
_REDACTED_WORDS = ("token", "password", "key", "code", "state")


def _plain(query):
    """Whether ``query`` (printable ASCII) holds no name describe_uri would redact: none of
    the redacted words anywhere in it, escapes decoded (``%6Bey`` spells ``key``)."""
    if not query.isascii() or not query.isprintable():
        return False
    text = urllib.parse.unquote_plus(query) if "%" in query or "+" in query else query
    text = text.lower()
    return not any(word in text for word in _REDACTED_WORDS)


def _client(request):
    return client_address(request.headers, request.remote_ip)


# Probes come every few seconds from every kubelet and load balancer: debug, not info.
PROBE_PATHS = frozenset(("/healthz", "/readyz"))


def _level(request):
    # XHR terminal transports make a request per keystroke batch: debug, not info.
    if request.path.startswith(TERMINAL_PREFIX) or request.path in PROBE_PATHS:
        return logging.DEBUG
    return logging.INFO


def incoming(request):
    log.log(_level(request), "Incoming %s %s %s request from %s", request.version,
            request.method, describe_uri(request), _client(request))


def outgoing(handler):
    """Tornado's log_function: runs once the response is finished."""
    request = handler.request
    if request.body and log.isEnabledFor(logging.DEBUG):
        log.debug("Body of %s %s from %s: %s", request.method, _shown_path(request.path),
                  _client(request), describe_body(request.path, request.body))
    log.log(_level(request), "Outgoing response to %s with %d status code in %.1f ms",
            _client(request), handler.get_status(), 1000.0 * request.request_time())
    audit(handler)


# --- the audit seam of writes ---------------------------------------------------------------
#
# Every POST, PUT, PATCH and DELETE of an audited route (routes.Route.audit) is recorded once its
# response is finished: the handler says what its entries are (``handler.audit_entries()``,
# handlers/base.py: who, which object, how it went; audit/entry.py has the fields) and where
# they go (``handler.audit_sink``, the audit trail: one JSON line on the
# ``dashboard_api.audit`` logger at once, the audit database behind it; audit/trail.py).
# Without either (a handler of another kind, a gateway assembled without a trail), the entry
# is the request's alone, as one JSON line on that logger.
#
# Who made the change is named as well as the gateway knows it (audit/entry.py): the person
# whose ID token it verified; else the user the API server's refusal names; else the ``sub``
# claim of a JWT bearer token (a service account's carries
# ``system:serviceaccount:<ns>:<name>``, the name the API server authorizes), verified only in
# the sense that the API server accepted that token for this very write (a 2xx or 3xx: every
# audited route calls the API server with the caller's credentials before it can succeed);
# otherwise the claim is marked unverified (anyone can write any name in it), and a token
# that names nobody is ``unknown`` (asking the API server with a TokenReview would take the
# service's own rights on every write, which anyone could then trigger). The token itself is
# never logged or stored.

audit_log = logging.getLogger("dashboard_api.audit")
WRITE_METHODS = frozenset(("POST", "PUT", "PATCH", "DELETE"))


def user_name(headers):
    """The caller's user name as the request tells it (unverified), or "unknown"."""
    impersonated = (headers.get("Impersonate-User") or "").strip()
    token = bearer_token(headers.get("Authorization"))
    name = (subject(token) if token else None) or "unknown"
    if impersonated:
        return "%s (impersonating %s)" % (name, impersonated)
    return name


def audited(handler):
    """Whether the finished request is a write of an audited route."""
    route = getattr(handler, "route", None)
    return handler.request.method in WRITE_METHODS and route is not None and route.audit


def audit(handler):
    """Records the entries of a finished write request (nothing for reads or unmatched
    paths)."""
    if not audited(handler):
        return
    request, route = handler.request, handler.route
    make = getattr(handler, "audit_entries", None)
    entries = make() if make is not None else [{
        "user": user_name(request.headers), "userVerified": False, "method": request.method,
        "route": route.operation(request.method.lower()), "path": describe_uri(request),
        "status": handler.get_status()}]
    sink = getattr(handler, "audit_sink", None)
    if sink is not None:
        sink(entries)
        return
    for entry in entries:
        audit_log.info("%s", ujson.dumps(entry, ensure_ascii=False,
                                         escape_forward_slashes=False))


class TornadoLogFilter(logging.Filter):
    """Keeps Tornado's records but takes out what must not be logged (see the module doc)."""

    def filter(self, record):
        if isinstance(record.msg, str) and record.msg.startswith("Malformed HTTP message from"):
            # Tornado: ("... from %s: %s", peer, error); the error quotes the bad header value.
            record.msg = "Malformed HTTP message from %s (detail not logged)"
            record.args = record.args[:1] if isinstance(record.args, tuple) else ()
            record.exc_info = record.exc_text = None
            return True
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True  # the handler reports the broken record
        record.msg = _SESSION_CLAIM.sub(lambda m: m.group(1) + "fp-" + fingerprint(m.group(2)),
                                        hide_terminal_ids(message))
        record.args = ()
        return True


def install_log_filters():
    """Puts TornadoLogFilter on Tornado's loggers and quiets the libraries' body-printing debug
    loggers (once, at start-up)."""
    for name in TORNADO_LOGGERS:
        logging.getLogger(name).addFilter(TornadoLogFilter())
    quiet_library_loggers()


def quiet_library_loggers():
    """Holds the libraries' debug loggers at INFO whatever the verbosity: at debug, urllib3
    prints every URL it calls (with query), the kubernetes client every response body (a
    Secret read or written through it), and http.client (through the kubernetes client's
    ``debug`` setting) every header line, Authorization included."""
    for name in LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET or logger.level < logging.INFO:
            logger.setLevel(logging.INFO)
