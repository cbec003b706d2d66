"""Sign-in with an OpenID Connect provider (issue #29): the gateway as a relying party.

One idea per module: ``http`` (calls to the provider, with deadlines and bounded answers),
``jwks`` (the provider's keys), ``idtoken`` (verifying an ID token), ``provider`` (discovery and
the keys, cached), ``flow`` (state, nonce and PKCE sealed in a cookie), ``refreshcookie`` (the
refresh token sealed in an HttpOnly cookie), ``sessioncookie`` (the current ID token sealed in
an HttpOnly cookie of the whole gateway: one sign-in for every cluster), ``relyingparty``
(authorization, code exchange, refresh, logout). The routes are in handlers/oidc.py. Configured
by the ``--oidc-*`` flags; ``make`` returns None without ``--oidc-issuer-url``.
"""

import urllib.parse

from dashboard_api.auth.oidc import idtoken
from dashboard_api.auth.oidc.flow import Flows
from dashboard_api.auth.oidc.http import Http
from dashboard_api.auth.oidc.provider import Provider
from dashboard_api.auth.oidc.refreshcookie import RefreshCookies
from dashboard_api.auth.oidc.relyingparty import RelyingParty, Settings
from dashboard_api.auth.oidc.sessioncookie import SessionCookies

MAX_SECRET_BYTES = 4096


class OidcConfigError(ValueError):
    """The --oidc-* flags cannot work together (said at start-up)."""


class SignIn:
    """What the routes use: ``rp`` (RelyingParty), ``flows`` (flow.Flows), ``refresh``
    (refreshcookie.RefreshCookies), ``sessions`` (sessioncookie.SessionCookies)."""

    def __init__(self, rp, flows, refresh, sessions=None):
        self.rp, self.flows, self.refresh = rp, flows, refresh
        self.sessions = sessions

    @property
    def settings(self):
        return self.rp.settings


def _https_url(value, flag, loopback_http=False):
    parsed = urllib.parse.urlsplit(value)
    loopback = parsed.hostname in ("127.0.0.1", "::1", "localhost")
    if parsed.scheme != "https" and not (loopback_http and loopback and parsed.scheme == "http"):
        raise OidcConfigError("%s must be an https URL, got %r" % (flag, value))
    if not parsed.hostname or parsed.fragment or parsed.username:
        raise OidcConfigError("%s is not a usable URL: %r" % (flag, value))
    return value


def _read_secret(path):
    try:
        with open(path) as f:
            secret = f.read(MAX_SECRET_BYTES + 1).strip()
    except OSError as exc:
        raise OidcConfigError("cannot read --oidc-client-secret-file %s: %s"
                              % (path, exc.strerror))
    if not secret or len(secret) > MAX_SECRET_BYTES:
        raise OidcConfigError("--oidc-client-secret-file holds no usable secret")
    return secret


def settings_from(options):
    """Settings from the flags, or None without --oidc-issuer-url; OidcConfigError."""
    issuer = getattr(options, "oidc_issuer_url", None)
    if not issuer:
        return None
    _https_url(issuer, "--oidc-issuer-url")
    if not options.oidc_client_id:
        raise OidcConfigError("--oidc-issuer-url needs --oidc-client-id")
    if not options.oidc_redirect_url:
        raise OidcConfigError("--oidc-issuer-url needs --oidc-redirect-url (the gateway's "
                              "/oidc/callback as the browser reaches it)")
    # Plain HTTP only toward a browser on this machine (a developer's gateway).
    redirect = _https_url(options.oidc_redirect_url, "--oidc-redirect-url", loopback_http=True)
    if not urllib.parse.urlsplit(redirect).path.endswith("/oidc/callback"):
        raise OidcConfigError("--oidc-redirect-url must end in /oidc/callback, got %r" % redirect)
    algorithms = tuple(a.strip() for a in options.oidc_signing_algs.split(",") if a.strip())
    for alg in algorithms:
        if alg not in idtoken.ALGORITHMS:
            raise OidcConfigError("--oidc-signing-algs: %r is not allowed (choose from %s)"
                                  % (alg, ", ".join(idtoken.ALGORITHMS)))
    secret = _read_secret(options.oidc_client_secret_file) \
        if options.oidc_client_secret_file else None
    return Settings(issuer, options.oidc_client_id, redirect, client_secret=secret,
                    scopes=tuple(s.strip() for s in options.oidc_scopes.split(",") if s.strip()),
                    username_claim=options.oidc_username_claim,
                    groups_claim=options.oidc_groups_claim, algorithms=algorithms)


def make(options, secret):
    """The SignIn of the gateway, or None when OIDC is not configured; ``secret``: the CSRF
    key's bytes every replica shares (the cookies are sealed under keys derived from it)."""
    settings = settings_from(options)
    if settings is None:
        return None
    provider = Provider(settings.issuer, Http(options.oidc_ca_file))
    return SignIn(RelyingParty(settings, provider), Flows(secret), RefreshCookies(secret),
                  SessionCookies(secret))
