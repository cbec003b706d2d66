"""Every runtime flag of the gateway, with its default and meaning, in one place.

Flags may also come from a file: ``dashboard-api @/etc/dashboard-api/dashboard-api.conf`` reads one
flag per line (``--name=value``); blank lines and lines starting with ``#`` are skipped.
Upstream's flag names are accepted as aliases where ours differ (``--act-as-proxy``,
``--openapi-enabled``, ``--disable-csrf-protection``) so existing deployments keep working.
"""

import argparse
import os
import re

from dashboard_api.kinds import table as kinds
from dashboard_api.kinds.kind import OPT_IN
from dashboard_api.serving import proxies

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$")
_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


def duration(text):
    """Seconds from `30s`, `1m`, `500ms`, `2h`, `90d` or a bare number of seconds."""
    m = _DURATION.match(str(text).strip())
    if not m:
        raise argparse.ArgumentTypeError("invalid duration %r (use e.g. 30s, 1m)" % text)
    return float(m.group(1)) * _UNIT[m.group(2)]


def _positive_duration(text):
    value = duration(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0, got %r" % text)
    return value


def _bool(text):
    lowered = str(text).lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError("expected true or false, got %r" % text)


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %s" % text)
    return value


def _opt_in_kinds(text):
    """A comma list of kinds whose watch cache is opt-in (``Kind.cached == OPT_IN``)."""
    allowed = [k.name for k in kinds.TABLE if k.cached == OPT_IN]
    names = tuple(n.strip() for n in str(text).split(",") if n.strip())
    for name in names:
        if name not in allowed:
            raise argparse.ArgumentTypeError("%r is not a kind to opt in to (choose from: %s)"
                                             % (name, ", ".join(allowed)))
    return names


_SIZE = re.compile(r"^(\d+)(Ki|Mi|Gi)?$")
_SIZE_UNIT = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, None: 1}


def byte_size(text):
    """Bytes from `4Mi`, `512Ki` or a bare number of bytes (at least 1)."""
    m = _SIZE.match(str(text).strip())
    if not m or int(m.group(1)) < 1:
        raise argparse.ArgumentTypeError("invalid size %r (use e.g. 4Mi, 512Ki)" % text)
    return int(m.group(1)) * _SIZE_UNIT[m.group(2)]


def _flag(parser, *names, help):
    """A boolean flag usable as `--x`, `--x=true` or `--x=false`."""
    parser.add_argument(*names, nargs="?", const=True, default=False, type=_bool, help=help)


class _Parser(argparse.ArgumentParser):
    def convert_arg_line_to_args(self, line):
        line = line.strip()
        if not line or line.startswith("#"):
            return []
        return [line]


def parser():
    p = _Parser(prog="dashboard-api", fromfile_prefix_chars="@",
                description="HTTP/JSON gateway for the Kubernetes Dashboard")
    net = p.add_argument_group("serving")
    net.add_argument("--bind-address", default="0.0.0.0", help="address serving HTTPS")
    net.add_argument("--port", type=int, default=8443, help="HTTPS port")
    net.add_argument("--insecure-bind-address", default=None,
                     help="address serving plain HTTP (unset: HTTP disabled)")
    net.add_argument("--insecure-port", type=int, default=8080, help="HTTP port")
    net.add_argument("--tls-cert-file", default=None,
                     help="TLS certificate path (a relative name is looked up in "
                          "--default-cert-dir when it is not found as given)")
    net.add_argument("--tls-key-file", default=None, help="TLS private key path (same lookup)")
    _flag(net, "--auto-generate-certificates",
          help="generate an ECDSA P-256 certificate into --default-cert-dir (reused on restart)")
    net.add_argument("--default-cert-dir", default="/certs",
                     help="directory of generated certificates")
    net.add_argument("--mode", choices=("dashboard", "api"), default="dashboard",
                     help="dashboard: every component; api: the API component and the gateway")
    net.add_argument("--web-root", default=None,
                     help="directory of web UI files served at / (single-page-app fallback)")
    _flag(net, "--enable-openapi", "--openapi-enabled",
          help="serve the OpenAPI description at /apidocs.json")
    net.add_argument("--drain-period", type=duration, default=duration("5s"),
                     help="after SIGTERM, how long /readyz says 503 while requests are still "
                          "served, so that endpoints and load balancers update")
    net.add_argument("--grace-period", type=duration, default=duration("25s"),
                     help="after SIGTERM, the longest until the process exits (keep it under "
                          "the pod's terminationGracePeriodSeconds)")
    net.add_argument("--max-body-size", type=byte_size, default=byte_size("4Mi"),
                     help="largest request body on any route (4Mi: a deploy file of several "
                          "objects); a larger one is a 413 before it is read")

    # Issue 18: connections are bounded (dashboard_api/serving/connections.py).
    net.add_argument("--header-timeout", type=duration, default=duration("10s"),
                     help="a new connection's first request, and any request once its first "
                          "byte is in, must complete its headers within this; else closed")
    net.add_argument("--idle-timeout", type=duration, default=duration("60s"),
                     help="how long a kept-alive connection may wait silent for its next "
                          "request (responses being streamed and websockets are not idle)")
    net.add_argument("--body-timeout", type=duration, default=duration("60s"),
                     help="how long a request's body may take to arrive")
    net.add_argument("--max-connections", type=_positive_int, default=2048,
                     help="most client connections open at once (websockets included; at "
                          "most three quarters of the open-file limit); more are answered "
                          "503 and closed")

    kube = p.add_argument_group("cluster")
    kube.add_argument("--apiserver-host", default=None,
                      help="API server address (overrides in-cluster config)")
    kube.add_argument("--kubeconfig", default=None,
                      help="client config file(s) for out-of-cluster use (several joined by "
                           "':' as in $KUBECONFIG): every context is a cluster, served under "
                           "/clusters/{context}/, the current context also at the root")
    kube.add_argument("--cluster", dest="clusters", action="append", default=[],
                      metavar="NAME=KUBECONFIG[:CONTEXT]",
                      help="one more cluster, served under /clusters/NAME/ (repeatable)")
    kube.add_argument("--cluster-auth", dest="cluster_auth", action="append", default=[],
                      metavar="[NAME=]forward|impersonate",
                      help="how a cluster learns who the caller is (repeatable; NAME left out: "
                           "the default cluster): forward (the default) sends the caller's "
                           "token as it is; impersonate sends an ID token of --oidc-issuer-url, "
                           "verified by the gateway, as the cluster's own credentials plus "
                           "Impersonate-User/Group naming the person (for an API server that "
                           "does not trust the provider; needs the impersonate RBAC of "
                           "conf/kubernetes/impersonation.yaml); other tokens are forwarded")
    kube.add_argument("--default-cluster", default=None, metavar="NAME",
                      help="the cluster served at the root (default: the kubeconfig's "
                           "current context)")
    kube.add_argument("--cluster-idle-timeout", type=duration, default=duration("30m"),
                      help="a cluster other than the default unused this long lets its watch "
                           "cache go until next used (0: never)")
    kube.add_argument("--cluster-config-poll", type=duration, default=duration("10s"),
                      help="how often the kubeconfig files are re-read for clusters added, "
                           "changed or removed (0: never)")
    _flag(kube, "--apiserver-skip-tls-verify", help="skip TLS verification toward the API server")
    kube.add_argument("--apiserver-ca-bundle", default=None, help="CA bundle of the API server")
    _flag(kube, "--proxy", "--act-as-proxy",
          help="proxy mode: only per-request credentials, no service identity, "
               "no metrics integration")
    _flag(kube, "--cache-enabled",
          help="keep one cluster client per token (the specification's flag). A client holds "
               "no connection (every caller shares the pools), so this saves nothing: a list "
               "page's p50 is the same with and without it (0.83 ms; 4.9 ms on a loaded "
               "machine), and finding a kept client (a SHA-256 of the token) costs 2.7 us "
               "against 0.8 us to make one (tests/bench/bench_cache_enabled.py)")
    kube.add_argument("--cache-size", type=_positive_int, default=1000,
                      help="most clients kept by --cache-enabled")
    kube.add_argument("--cache-ttl", type=duration, default=duration("10m"),
                      help="how long a cached client lives")
    kube.add_argument("--api-qps", type=float, default=0.0,
                      help="client-side rate limit toward the API server, calls a second per "
                           "caller (0: none, as in the official Python client)")
    kube.add_argument("--api-burst", type=_positive_int, default=10,
                      help="client-side burst allowance per caller")
    kube.add_argument("--api-workers", type=_positive_int, default=16,
                      help="threads (and pooled connections) for blocking API server calls")
    kube.add_argument("--watch-cache", nargs="?", const=True, default=True, type=_bool,
                      help="answer lists from a shared watch cache filled with the service's "
                           "identity, after the API server authorizes each caller (default "
                           "true; false, or --proxy: every list goes to the API server)")
    kube.add_argument("--watch-cache-opt-in", type=_opt_in_kinds, default=(),
                      help="kinds the watch cache holds only when named here, comma-separated: "
                           "lease (every node heartbeat is a watch event: about 0.2 ms of CPU "
                           "each, 2%% of a core per replica at 1,000 nodes; uncached, a list of "
                           "leases is read from the API server when asked for)")
    kube.add_argument("--access-cache-ttl", type=duration, default=duration("5s"),
                      help="how long a caller's list right, as the API server answered it, is "
                           "reused: the longest a revoked right still shows cached lists "
                           "while the watch cache cannot vouch for it (below)")
    kube.add_argument("--access-cache-max-age", type=duration, default=duration("30s"),
                      help="how long a caller's list right is reused while the watch cache "
                           "sees every role, binding and service account unchanged: a right "
                           "taken back through RBAC ends it at once, a token revoked otherwise "
                           "(its secret deleted, its pod gone) after this (0: the TTL only)")
    kube.add_argument("--access-outage-memory", type=duration, default=duration("1h"),
                      help="while the API server does not answer, a caller it has answered "
                           "keeps its last list rights for this long from that answer (RBAC "
                           "cannot change meanwhile; 0: a 503 as soon as the rights expire)")
    kube.add_argument("--max-large-lists", type=_positive_int, default=2,
                      help="lists longer than one chunk read from the API server at once "
                           "(bounds memory); others wait")
    kube.add_argument("--large-list-wait", type=duration, default=duration("20s"),
                      help="how long a list waits for a slot before a 503 with Retry-After")
    kube.add_argument("--cache-sync-wait", type=duration, default=duration("10s"),
                      help="how long a list waits for its kind's first sync in the watch cache "
                           "before a 503 with Retry-After")
    # Issue 27: every call to the API server has a deadline (kubeapi/deadlines.py).
    kube.add_argument("--apiserver-connect-timeout", type=_positive_duration,
                      default=duration("5s"),
                      help="how long a new connection to the API server may take (TCP and TLS)")
    kube.add_argument("--apiserver-request-timeout", "--api-timeout", dest="api_timeout",
                      type=_positive_duration, default=duration("30s"),
                      help="the longest an API server call may take, from sending it to the "
                           "last byte of the answer (below the API server's own 60s); past it "
                           "the caller gets a 504 (reason Timeout), and a write's outcome is "
                           "said to be unknown. Log streams: the longest wait for the next chunk")
    kube.add_argument("--exec-ping-interval", type=_positive_duration, default=duration("30s"),
                      help="a terminal's exec connection to the API server is pinged this "
                           "often and closed when a ping is not answered within as long; the "
                           "browser is then told the connection was lost")
    kube.add_argument("--watch-idle-timeout", type=_positive_duration, default=duration("90s"),
                      help="a watch of the watch cache that has seen neither an event nor a "
                           "bookmark for this long (the API server sends a bookmark about every "
                           "minute) is taken for dead: it is closed and resumed from its last "
                           "resourceVersion")
    kube.add_argument("--read-your-writes-timeout", type=duration, default=duration("2s"),
                      help="after a write through the gateway, the longest its reply waits "
                           "until the watch cache has applied the written object's event, so "
                           "that the caller's next list shows it; past it (or 0) the reply "
                           "says 'Warning: 299' that lists may lag")

    sec = p.add_argument_group("security")
    _flag(sec, "--disable-csrf", "--disable-csrf-protection",
          help="turn off CSRF validation of POST requests")
    sec.add_argument("--csrf-key", default=None,
                     help="base64 CSRF signing secret shared by every replica; "
                          "precedence: this flag, --csrf-key-file, $CSRF_KEY, else random")
    sec.add_argument("--csrf-key-file", default=None,
                     help="file holding the base64 CSRF signing secret")
    sec.add_argument("--csrf-token-ttl", type=duration, default=duration("10m"),
                     help="lifetime of a CSRF token")

    met = p.add_argument_group("metrics")
    met.add_argument("--metrics-provider", choices=("sidecar", "none"), default="sidecar",
                     help="sidecar or none (none disables metrics)")
    met.add_argument("--sidecar-host", default=None,
                     help="base URL of the metrics sidecar (unset: reach it through the API "
                          "server's service proxy with the service's identity)")
    met.add_argument("--metrics-scraper-service-name",
                     default="kubernetes-dashboard-metrics-scraper",
                     help="service of the sidecar in --namespace, used without --sidecar-host")
    met.add_argument("--metric-client-check-period", type=duration, default=duration("30s"),
                     help="health-check interval of the metrics client")

    web = p.add_argument_group("web")
    web.add_argument("--namespace", default=os.environ.get("POD_NAMESPACE", "kubernetes-dashboard"),
                     help="namespace of the settings ConfigMap and of the sidecar service "
                          "(default $POD_NAMESPACE or kubernetes-dashboard)")
    web.add_argument("--settings-config-map-name", default="kubernetes-dashboard-settings",
                     help="name of the settings ConfigMap")
    web.add_argument("--system-banner", default="", help="system banner message")
    web.add_argument("--system-banner-severity", default="INFO",
                     help="INFO, WARNING or ERROR (anything else: INFO)")
    web.add_argument("--locale-config", default=None,
                     help='JSON file {"translations": [...]} listing the UI locales')
    _flag(web, "--web-ui-compat",
          help="the upstream web UI's shapes where they differ from the specification: log "
               "lines as {timestamp, content}, 401 bodies MSG_LOGIN_UNAUTHORIZED_ERROR (see "
               "dashboard_api/web/webui.py); off by default")

    p.add_argument("-v", "--log-level", default="info",
                   choices=("debug", "info", "warning", "error"),
                   help="log verbosity; request bodies are logged (redacted) only at debug")
    _add_hostile_input_flags(p)
    _add_oidc_flags(p)
    _add_audit_flags(p)
    return p


def _add_oidc_flags(p):
    """Sign-in with an OpenID Connect provider (issue 29: dashboard_api/auth/oidc/)."""
    oidc = p.add_argument_group("OpenID Connect sign-in")
    oidc.add_argument("--oidc-issuer-url", default=None,
                      help="the provider's issuer (https); set, the gateway offers sign-in "
                           "with it at /oidc/login (the API server must trust the same issuer "
                           "and client id: its --oidc-* flags)")
    oidc.add_argument("--oidc-client-id", default=None, help="the client id at the provider")
    oidc.add_argument("--oidc-client-secret-file", default=None,
                      help="file holding the client secret (unset: a public client, PKCE only)")
    oidc.add_argument("--oidc-scopes", default="openid,email,profile,groups",
                      help="comma list of scopes asked for (openid is always asked); add "
                           "offline_access where the provider gives refresh tokens only then")
    oidc.add_argument("--oidc-redirect-url", default=None,
                      help="the gateway's /oidc/callback as the browser reaches it, e.g. "
                           "https://dashboard.example.com/oidc/callback (never derived from "
                           "the request's Host); register it at the provider")
    oidc.add_argument("--oidc-ca-file", default=None,
                      help="CA bundle of the provider's TLS certificate (unset: the system's)")
    oidc.add_argument("--oidc-username-claim", default="sub",
                      help="the claim naming the user, as the API server's flag of that name "
                           "(shown by /api/v1/me)")
    oidc.add_argument("--oidc-groups-claim", default="groups",
                      help="the claim listing the user's groups, as the API server's flag")
    oidc.add_argument("--oidc-username-prefix", default=None,
                      help="prefix of the user names of --cluster-auth impersonate clusters, as "
                           "the API server's flag (unset: the issuer and '#' unless the claim "
                           "is email; '-': none)")
    oidc.add_argument("--oidc-groups-prefix", default=None,
                      help="prefix of the group names of --cluster-auth impersonate clusters, "
                           "as the API server's flag (unset: none)")
    oidc.add_argument("--oidc-signing-algs", default="RS256",
                      help="comma list of ID token signature algorithms accepted (RS*, PS*, "
                           "ES*; never none nor HS*), as the API server's flag")


def retention(text):
    """(seconds, entries) from ``AGE[,ENTRIES]``: ``90d,1000000``, ``30d``."""
    age, _, entries = str(text).partition(",")
    seconds = _positive_duration(age)
    try:
        count = int(entries) if entries else DEFAULT_RETENTION_ENTRIES
    except ValueError:
        raise argparse.ArgumentTypeError("invalid number of entries %r" % entries) from None
    if count < 1:
        raise argparse.ArgumentTypeError("keep at least 1 entry, got %r" % entries)
    return seconds, count


DEFAULT_RETENTION_ENTRIES = 1000000


def _add_audit_flags(p):
    """The audit trail (issue #39: dashboard_api/audit/)."""
    audit = p.add_argument_group("audit trail")
    audit.add_argument("--audit-db", default=None,
                       help="where every change made through the gateway is recorded: a "
                            "SQLite file (default audit.db in systemd's $STATE_DIRECTORY, else "
                            "$XDG_STATE_HOME/dashboard-api/, else ~/.local/state/dashboard-api/"
                            "), a PostgreSQL URL postgresql://... shared by replicas, or none "
                            "(the log only)")
    audit.add_argument("--audit-retention", type=retention, default=retention("90d"),
                       metavar="AGE[,ENTRIES]",
                       help="entries older than AGE are deleted, then the oldest beyond "
                            "ENTRIES (default 90d,%d)" % DEFAULT_RETENTION_ENTRIES)


def _trusted_proxies(text):
    try:
        return proxies.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError("--trusted-proxies: %s" % exc) from None


def _add_hostile_input_flags(p):
    """Flags of the protections against hostile clients (issue 18: terminals, sidecar)."""
    hostile = p.add_argument_group("client trust")
    hostile.add_argument("--trusted-proxies", type=_trusted_proxies, default=(),
                         help="comma list of addresses or CIDRs of the reverse proxies in "
                              "front of the gateway; only when the peer is one of them are "
                              "X-Forwarded-For and friends believed for per-client budgets "
                              "(default: none, the peer address is the client)")
    hostile.add_argument("--sidecar-token-file", default=None,
                         help="file holding a bearer token sent to the metrics sidecar (which "
                              "then refuses requests without it; see the sidecar's flag of "
                              "the same name)")


def parse(argv=None):
    return parser().parse_args(argv)
