"""Request and response logging.

Every request is logged when it arrives and when its response is sent, with the client address
taken from X-Original-Forwarded-For, X-Forwarded-For, X-Real-Ip, then the peer. Bodies are
logged only at debug level, and then with every credential-like field redacted: the sign-in
calls (/api/v1/login, /api/v1/csrftoken/login) show their content only at debug, and tokens,
kubeconfigs, passwords, secret data and terminal keystrokes never reach the log at all.
Headers are never logged.

Terminal (SockJS) URLs carry the SockJS session id, which lets whoever knows it poll that
shell's xhr transport: they are logged as /api/sockjs/<server>/*/<transport>, without query.
Tornado's and sockjs-tornado's own records get the same treatment from TornadoLogFilter, which
also drops the detail of malformed requests (Tornado quotes the offending header, which may be
an Authorization header).
"""

import logging
import re
import urllib.parse

import ujson

from dashboard_api.auth.bearer import bearer_token
from dashboard_api.auth.identity import subject

log = logging.getLogger("dashboard_api.requests")

REDACTED = "<redacted>"
# Keys whose values are credentials or may hold secret data (Secret data, deploy-file content).
SENSITIVE_KEYS = frozenset(("token", "password", "kubeconfig", "authorization", "data",
                            "stringdata", "content", "certificate", "key"))
MAX_BODY_CHARS = 2000
# Terminal traffic carries keystrokes (passwords typed into a shell): never shown.
TERMINAL_PREFIX = "/api/sockjs"
_TERMINAL_URL = re.compile(re.escape(TERMINAL_PREFIX) + r"(?:/[^\s?]*)?(?:\?\S*)?")
# sockjs-tornado's own words when a session is claimed from another address.
_SESSION_CLAIM = re.compile(r"(Attempted to attach to session )\S+")
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


def describe_body(path, body):
    """What the debug log may show of a request body: its JSON with sensitive values redacted."""
    if path.startswith(TERMINAL_PREFIX):
        return "<%d bytes of terminal traffic>" % len(body)
    try:
        decoded = ujson.loads(body)
    except ValueError:
        return "<%d bytes, not JSON>" % len(body)
    text = ujson.dumps(redact(decoded), ensure_ascii=False, escape_forward_slashes=False)
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS] + "...(%d chars)" % len(text)
    return text


def terminal_path(uri):
    """A terminal URL without its SockJS session id or query."""
    parts = uri.split("?", 1)[0].split("/")
    if len(parts) >= 5:  # "", "api", "sockjs", server, session[, transport]
        parts[4] = "*"
    return "/".join(parts)


def hide_terminal_ids(text):
    """``text`` with every terminal URL in it shown by terminal_path."""
    return _TERMINAL_URL.sub(lambda m: terminal_path(m.group(0)), text)


def _shown_path(path):
    return terminal_path(path) if path.startswith(TERMINAL_PREFIX) else path


def describe_uri(request):
    """The path and query, with the value of any token-like query parameter redacted.

    Terminal URLs carry the terminal session id in their query (and the SockJS session id in
    their path): whoever holds it may bind that shell, so neither is shown."""
    if not request.query or request.path.startswith(TERMINAL_PREFIX):
        return _shown_path(request.path)
    pairs = urllib.parse.parse_qsl(request.query, keep_blank_values=True)
    shown = [(k, REDACTED if any(s in k.lower() for s in ("token", "password", "key")) else v)
             for k, v in pairs]
    return request.path + "?" + urllib.parse.urlencode(shown, safe="<>,")


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


# --- the audit line of writes ---------------------------------------------------------------
#
# Every POST, PUT, PATCH and DELETE of an audited route (routes.Route.audit) leaves one line:
# who (the user name as far as the request tells it), the verb, the route's resource and
# operation, the path (which names kind, namespace and object) and the status. The name comes
# from the request alone, with no call to the API server: the Impersonate-User header when
# present, else the ``sub`` claim of a JWT bearer token (a service account's token carries
# ``system:serviceaccount:<ns>:<name>``, the name the API server itself authorizes; the API
# server verified the signature before any write could succeed); otherwise ``unknown``
# (static and opaque tokens do not say whose they are, and asking the API server would take a
# TokenReview with the service's rights on every write). The token itself is never logged.

audit_log = logging.getLogger("dashboard_api.audit")
WRITE_METHODS = frozenset(("POST", "PUT", "PATCH", "DELETE"))


def user_name(headers):
    """The caller's user name as the request tells it, or "unknown"."""
    impersonated = (headers.get("Impersonate-User") or "").strip()
    token = bearer_token(headers.get("Authorization"))
    name = (subject(token) if token else None) or "unknown"
    if impersonated:
        return "%s (impersonating %s)" % (name, impersonated)
    return name


def audit(handler):
    """The audit line of a finished write request (nothing for reads or unmatched paths)."""
    request = handler.request
    route = getattr(handler, "route", None)
    if request.method not in WRITE_METHODS or route is None or not route.audit:
        return
    objects = getattr(handler, "audit_objects", None)
    audit_log.info("Audit: user=%s verb=%s resource=%s operation=%s path=%s status=%d%s",
                   ujson.dumps(user_name(request.headers), ensure_ascii=False,
                               escape_forward_slashes=False),
                   request.method, route.resource, route.operation(request.method.lower()),
                   describe_uri(request),
                   handler.get_status(),
                   " objects=" + ujson.dumps(objects, ensure_ascii=False,
                                             escape_forward_slashes=False) if objects else "")


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
        record.msg = _SESSION_CLAIM.sub(r"\1*", hide_terminal_ids(message))
        record.args = ()
        return True


def install_log_filters():
    """Puts TornadoLogFilter on Tornado's loggers (once, at start-up)."""
    for name in TORNADO_LOGGERS:
        logging.getLogger(name).addFilter(TornadoLogFilter())
