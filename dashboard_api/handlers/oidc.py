"""Sign-in with an OpenID Connect provider: /oidc/login, /oidc/callback, /oidc/refresh,
/oidc/logout and /oidc/session.js (issue 29; the relying party is dashboard_api/auth/oidc/).

A sign-in ends with the ID token in the ``token`` cookie, where the upstream web UI keeps its
token and from which it sends ``Authorization: Bearer``: the gateway still takes API credentials
only from that header. The refresh token goes into a cookie sealed with the shared secret,
HttpOnly (no page script reads it), SameSite=Strict, Path=/oidc/, Secure when the gateway is
reached over HTTPS. /oidc/session.js, which the gateway adds to the UI's index page, refreshes
the ID token before it expires and sends the person to sign in again when the provider no
longer allows it. Nothing here ever puts a token into a URL or a log line.

With several clusters (issue #28) a sign-in is for the web UI of one cluster: the one of the
path it starts from (``/clusters/{name}/oidc/login``; at the root, the default cluster's). Its
``token`` cookie gets that UI's path (Path=/clusters/{name}, as the UI's own cookie there), the
refresh cookie Path=/clusters/{name}/oidc/, so neither is ever sent to another cluster's page;
the callback stays the one configured redirect URL and learns the cluster from the sealed
flow cookie (auth/oidc/flow.py); the return path stays within the cluster's path.
"""

import html
import logging
import time
import urllib.parse

import ujson

from dashboard_api.auth.oidc.flow import FlowError, safe_return
from dashboard_api.auth.oidc.http import ProviderError
from dashboard_api.auth.oidc.relyingparty import SignInError, oauth_error
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.errors import not_found, unauthorized
from dashboard_api.serving.routes import Route
from dashboard_api.web.pages import (FLOW_COOKIE, OIDC_PREFIX, REFRESH_COOKIE, SESSION_SCRIPT,
                                     TOKEN_COOKIE, cookie_path, refresh_path, ui_base,
                                     with_session_script)

log = logging.getLogger("dashboard_api.oidc")

PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; " \
           "form-action 'none'; frame-ancestors 'none'"
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em}
a{margin-right:1.5em}</style></head>
<body><h1>%(title)s</h1><p>%(message)s</p>
<p><a href="%(base)soidc/login">Sign in again</a><a href="%(base)s">Open the dashboard</a></p>
</body></html>
"""


def set_refresh_cookie(handler, signin, tokens, issued=None, base=None):
    """The refresh token of ``tokens`` sealed into the HttpOnly cookie of the web UI at
    ``base`` (default: the request's, picker.ui_base), dropped when there is none; Secure
    when the gateway is reached over HTTPS (its redirect URL says)."""
    secure = signin.settings.redirect_url.startswith("https://")
    path = refresh_path(base or ui_base(handler))
    if not tokens.refresh_token:
        handler.clear_cookie(REFRESH_COOKIE, path=path, secure=secure, samesite="Strict")
        return
    value = signin.refresh.seal(tokens.refresh_token, tokens.claims["sub"], issued)
    handler.set_cookie(REFRESH_COOKIE, value, path=path, max_age=signin.refresh.max_age,
                       httponly=True, secure=secure, samesite="Strict")


class OidcHandler(BaseHandler):
    """What the /oidc routes share: the configuration, cookies, and the answer pages."""

    def prepare(self):
        if self.ctx.oidc is None:
            raise not_found("sign-in with OpenID Connect is not configured (--oidc-issuer-url)")
        return super().prepare()

    @property
    def signin(self):
        return self.ctx.oidc

    @property
    def base(self):
        """The path of the web UI this request's sign-in is for (picker.ui_base)."""
        return ui_base(self)

    @property
    def secure(self):
        """Cookies are Secure when the browser reaches the gateway over HTTPS (as the
        configured redirect URL says; never decided by the request)."""
        return self.signin.settings.redirect_url.startswith("https://")

    def origin(self):
        parts = urllib.parse.urlsplit(self.signin.settings.redirect_url)
        return "%s://%s" % (parts.scheme, parts.netloc)

    def page(self, status, title, message, base=None):
        self.set_status(status)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header("Content-Security-Policy", PAGE_CSP)
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Referrer-Policy", "no-referrer")
        self.finish(PAGE % {"title": html.escape(title), "message": html.escape(message),
                            "base": html.escape(base or self.base)})

    def go(self, location):
        """A 303 to ``location``; the referrer of the next request carries no query."""
        self.set_header("Referrer-Policy", "no-referrer")
        self.redirect(location, status=303)

    def set_session(self, tokens, issued=None, base=None):
        """The ID token into the UI's cookie (readable by the UI: it sends it as the Bearer),
        the refresh token sealed into the HttpOnly one; both for the web UI at ``base``
        (default: this request's)."""
        base = base or self.base
        lifetime = max(1, int(tokens.expires - time.time()))
        self.set_cookie(TOKEN_COOKIE, tokens.id_token, path=cookie_path(base),
                        max_age=lifetime, secure=self.secure, samesite="Lax")
        set_refresh_cookie(self, self.signin, tokens, issued, base)

    def clear_refresh(self):
        self.clear_cookie(REFRESH_COOKIE, path=refresh_path(self.base), secure=self.secure,
                          samesite="Strict")

    def clear_session(self):
        self.clear_cookie(TOKEN_COOKIE, path=cookie_path(self.base), secure=self.secure,
                          samesite="Lax")
        self.clear_refresh()

    async def refreshed(self):
        """Fresh tokens set as cookies; SignInError when there is no session to refresh or
        the provider refuses (the refresh cookie is then dropped)."""
        opened = self.signin.refresh.open(self.get_cookie(REFRESH_COOKIE))
        if opened is None:
            raise SignInError("no session to refresh")
        refresh_token, subject, issued = opened
        try:
            tokens = await self.signin.rp.refresh(refresh_token, subject)
        except SignInError:
            self.clear_refresh()
            raise
        self.set_session(tokens, issued)
        return tokens


class LoginHandler(OidcHandler):
    async def get(self):
        base = self.base
        flow, cookie = self.signin.flows.start(self.get_query_argument("return", base), base)
        try:
            url = await self.signin.rp.authorization_url(flow)
        except ProviderError as exc:
            return self.page(503, "Sign-in is unavailable", exc.message)
        self.set_cookie(FLOW_COOKIE, cookie, path=OIDC_PREFIX + "callback",
                        max_age=self.signin.flows.ttl, httponly=True, secure=self.secure,
                        samesite="Lax")
        self.go(url)


class CallbackHandler(OidcHandler):
    async def get(self):
        cookie = self.get_cookie(FLOW_COOKIE)
        # One callback per sign-in: the flow cookie goes whatever happens next.
        self.clear_cookie(FLOW_COOKIE, path=OIDC_PREFIX + "callback", secure=self.secure,
                          samesite="Lax")
        title = "Sign-in refused"
        try:
            flow = self.signin.flows.finish(cookie, self.get_query_argument("state", None))
            error = self.get_query_argument("error", None)
            if error is not None:
                raise SignInError("the identity provider did not sign you in (%s)"
                                  % oauth_error({"error": error}))
            tokens = await self.signin.rp.exchange(flow, self.get_query_argument("code", None))
        except (FlowError, SignInError) as exc:
            log.info("OpenID Connect sign-in refused: %s", exc)
            return self.page(400, title, "Nothing was signed in: %s." % exc, base="/")
        except ProviderError as exc:
            return self.page(503, "Sign-in is unavailable", exc.message)
        self.set_session(tokens, base=flow.base)
        log.info("signed in with OpenID Connect: %s", self.signin.rp.username(tokens.claims))
        self.go(flow.return_to)


class RefreshHandler(OidcHandler):
    async def get(self):
        """A navigation: refreshed, back to ``return``; else to the provider."""
        base = self.base
        back = safe_return(self.get_query_argument("return", base), base)
        try:
            await self.refreshed()
        except (SignInError, ProviderError):
            return self.go(base + "oidc/login?" + urllib.parse.urlencode({"return": back}))
        self.go(back)

    async def post(self):
        """For the page's script: 200 {expires} with the new ``token`` cookie; 401 when the
        person must sign in again; 503 when the provider cannot be reached."""
        try:
            tokens = await self.refreshed()
        except SignInError as exc:
            raise unauthorized() from exc
        self.write_json({"expires": int(tokens.expires * 1000)})


class LogoutHandler(OidcHandler):
    async def get(self):
        """Ends the session here (both cookies), then at the provider when it offers
        RP-initiated logout; the provider sends the browser back here, to the signed-out
        page."""
        had_session = self.get_cookie(TOKEN_COOKIE) or self.get_cookie(REFRESH_COOKIE)
        self.clear_session()
        if had_session:
            url = await self.signin.rp.logout_url(self.origin() + "/oidc/logout")
            if url:
                return self.go(url)
        self.page(200, "Signed out", "You are signed out of the dashboard.")


# The index page asked for with this query is served as it is, without a sign-in redirect:
# the way to the UI's own token and kubeconfig sign-in when OpenID Connect is configured.
LOCAL_SIGN_IN = ("sign-in", "token")


def ui_index(handler, index_file):
    """For the web UI's index page under --web-root: with OpenID Connect configured, a person
    without a token is sent to sign in (through a refresh when the session can be renewed),
    and the page gets the session script. Returns the page's bytes to serve, or None when
    the handler has redirected (or there is nothing to change: OIDC not configured)."""
    ctx = handler.application.ctx
    if getattr(ctx, "oidc", None) is None:
        return None
    base = ui_base(handler)
    if not handler.get_cookie(TOKEN_COOKIE) and \
            handler.get_query_argument(LOCAL_SIGN_IN[0], None) != LOCAL_SIGN_IN[1]:
        back = safe_return(handler.request.uri, base)
        handler.redirect(base + "oidc/refresh?" + urllib.parse.urlencode({"return": back}),
                         status=303)
        return None
    with open(index_file, "rb") as f:
        return with_session_script(f.read(), base)


CHECK_PERIOD_MS = 2000


class SessionScriptHandler(OidcHandler):
    def get(self):
        self.set_header("Content-Type", "text/javascript; charset=UTF-8")
        self.set_header("Cache-Control", "no-cache")
        self.finish(SESSION_SCRIPT.substitute(
            issuer=ujson.dumps(self.signin.settings.issuer, escape_forward_slashes=False),
            base=ujson.dumps(self.base, escape_forward_slashes=False),
            period=CHECK_PERIOD_MS))


ROUTES = [
    Route("/oidc/login", LoginHandler, "oidc-login", component="auth", feature="oidc",
          auth=False, summary="Starts a sign-in at the OpenID Connect provider (a redirect there); "
                  "`return`: the path to land on"),
    Route("/oidc/callback", CallbackHandler, "oidc-callback", component="auth", feature="oidc",
          auth=False, summary="Where the provider sends the browser back; sets the session cookies"),
    Route("/oidc/refresh", RefreshHandler, "oidc-refresh", component="auth", feature="oidc",
          auth=False, csrf=False, audit=False, max_body=1024,
          summary="A fresh ID token from the sealed refresh cookie (GET: a navigation, "
                  "POST: {expires} for the page's script)"),
    Route("/oidc/logout", LogoutHandler, "oidc-logout", component="auth", feature="oidc",
          auth=False, summary="Ends the session here and at the provider"),
    Route("/oidc/session.js", SessionScriptHandler, "oidc-session-script", component="auth",
          feature="oidc", auth=False,
          summary="The script that keeps the web UI's OpenID Connect session alive"),
]
