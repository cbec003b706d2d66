"""Sign-in with an OpenID Connect provider: /oidc/login, /oidc/callback, /oidc/refresh,
/oidc/logout and /oidc/session.js (issue 29; the relying party is dashboard_api/auth/oidc/).

A sign-in ends with the ID token in the ``token`` cookie, where the upstream web UI keeps its
token and from which it sends ``Authorization: Bearer``: the gateway still takes API credentials
only from that header. The refresh token goes into a cookie sealed with the shared secret,
HttpOnly (no page script reads it), SameSite=Strict, Path=/oidc/, Secure when the gateway is
reached over HTTPS. /oidc/session.js, which the gateway adds to the UI's index page, refreshes
the ID token before it expires and sends the person to sign in again when the provider no
longer allows it. Nothing here ever puts a token into a URL or a log line.

With several clusters (issue #28) a sign-in starts from the web UI of one cluster: the one of
the path it starts from (``/clusters/{name}/oidc/login``; at the root, the default cluster's).
Its ``token`` cookie gets that UI's path (Path=/clusters/{name}, as the UI's own cookie there);
the callback stays the one configured redirect URL and learns the cluster from the sealed flow
cookie (auth/oidc/flow.py); the return path stays within the cluster's path.

One sign-in serves every cluster (issue #39): the refresh token and the current ID token are
sealed into HttpOnly cookies of the whole gateway (Path=/: ``dashboard_oidc_refresh``,
SameSite=Strict; ``dashboard_oidc_session``, SameSite=Lax, auth/oidc/sessioncookie.py), so that
any other cluster's ``/oidc/refresh`` (which its UI's index page goes through when it has no
``token``, and which the session script and the home page ask) sets that cluster's ``token``
cookie from the session, without a trip to the provider while the ID token has life left, and
with the refresh token after. A token of another kind (pasted, or a kubeconfig's) stays in its
own UI's cookie and never reaches another cluster. Signing out at any path ends the session
everywhere: every UI's ``token`` cookie and both shared cookies are dropped.
"""

import html
import http.cookies
import logging
import time
import urllib.parse

import ujson

from dashboard_api.auth.oidc.flow import FlowError, safe_return
from dashboard_api.auth.oidc.http import ProviderError
from dashboard_api.auth.oidc.relyingparty import SignInError, Tokens, oauth_error
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.errors import not_found, unauthorized
from dashboard_api.serving.routes import Route
from dashboard_api.web.pages import (FLOW_COOKIE, OIDC_PREFIX, REFRESH_COOKIE, SESSION_COOKIE,
                                     SESSION_SCRIPT, SHARED_PATH, TOKEN_COOKIE, cookie_path,
                                     refresh_path, ui_base, ui_bases, with_session_script)

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


def set_shared_session(handler, signin, tokens, issued=None):
    """The sign-in's cookies of the whole gateway: the refresh token of ``tokens`` sealed into
    the HttpOnly refresh cookie (dropped when there is none), the ID token into the HttpOnly
    session cookie (dropped when too long for one); Secure when the gateway is reached over
    HTTPS (its redirect URL says)."""
    secure = signin.settings.redirect_url.startswith("https://")
    if not tokens.refresh_token:
        handler.clear_cookie(REFRESH_COOKIE, path=SHARED_PATH, secure=secure, samesite="Strict")
    else:
        value = signin.refresh.seal(tokens.refresh_token, tokens.claims["sub"], issued)
        handler.set_cookie(REFRESH_COOKIE, value, path=SHARED_PATH,
                           max_age=signin.refresh.max_age, httponly=True, secure=secure,
                           samesite="Strict")
    sealed = signin.sessions.seal(tokens.id_token) if signin.sessions is not None else None
    if sealed is None:
        handler.clear_cookie(SESSION_COOKIE, path=SHARED_PATH, secure=secure, samesite="Lax")
        return
    handler.set_cookie(SESSION_COOKIE, sealed, path=SHARED_PATH,
                       max_age=max(1, int(tokens.expires - time.time())), httponly=True,
                       secure=secure, samesite="Lax")


def margin(claims):
    """How long before its expiry an ID token is renewed: a quarter of its lifetime, at most
    a minute (as the session script counts)."""
    lifetime = claims["exp"] - claims.get("iat", claims["exp"])
    return min(60.0, max(2.0, lifetime / 4.0))


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

    def set_token(self, tokens, base=None):
        """The ID token into the ``token`` cookie of the web UI at ``base`` (default: this
        request's), readable by the UI: it sends it as the Bearer."""
        lifetime = max(1, int(tokens.expires - time.time()))
        self.set_cookie(TOKEN_COOKIE, tokens.id_token, path=cookie_path(base or self.base),
                        max_age=lifetime, secure=self.secure, samesite="Lax")

    def set_session(self, tokens, issued=None, base=None):
        """The ID token into the UI's cookie at ``base`` (default: this request's), and the
        sign-in's cookies of the whole gateway (set_shared_session)."""
        self.set_token(tokens, base)
        set_shared_session(self, self.signin, tokens, issued)

    def clear_shared(self):
        for name, samesite in ((REFRESH_COOKIE, "Strict"), (SESSION_COOKIE, "Lax")):
            self.clear_cookie(name, path=SHARED_PATH, secure=self.secure, samesite=samesite)

    def expire(self, name, path, samesite):
        """A Set-Cookie line dropping cookie ``name`` of ``path``: one answer may drop a
        cookie of one name at several paths (Tornado's clear_cookie keeps one per name)."""
        morsel = http.cookies.Morsel()
        morsel.set(name, "", "")
        morsel.update({"path": path, "expires": "Thu, 01 Jan 1970 00:00:00 GMT",
                       "max-age": 0, "samesite": samesite, "secure": self.secure})
        self.add_header("Set-Cookie", morsel.OutputString())

    def clear_session(self):
        """Signed out everywhere: every web UI's ``token`` cookie, the shared cookies, and
        the refresh cookies older releases kept per UI."""
        for base in ui_bases(self.ctx):
            self.expire(TOKEN_COOKIE, cookie_path(base), "Lax")
            if base != "/":
                self.expire(REFRESH_COOKIE, refresh_path(base), "Strict")
        self.expire(REFRESH_COOKIE, refresh_path("/"), "Strict")
        self.clear_shared()

    async def from_session(self):
        """The session's current ID token when it is ours, valid, of the person of the
        refresh cookie (when there is one) and not about to expire; else None."""
        sealed = self.signin.sessions.open(self.get_cookie(SESSION_COOKIE)) \
            if self.signin.sessions is not None else None
        if sealed is None:
            return None
        try:
            claims = await self.signin.rp.verify(sealed)
        except SignInError:
            return None
        opened = self.signin.refresh.open(self.get_cookie(REFRESH_COOKIE))
        if opened is not None and opened[1] != claims["sub"]:
            return None
        if claims["exp"] - time.time() <= margin(claims):
            return None
        return Tokens(sealed, None, claims)

    async def refreshed(self):
        """Fresh tokens set as cookies: the session's ID token while it has life left (no
        call to the provider), else new ones for the refresh token. SignInError when there
        is no session to refresh or the provider refuses (the shared cookies are then
        dropped)."""
        current = await self.from_session()
        if current is not None:
            self.set_token(current)
            return current
        opened = self.signin.refresh.open(self.get_cookie(REFRESH_COOKIE))
        if opened is None:
            raise SignInError("no session to refresh")
        refresh_token, subject, issued = opened
        try:
            tokens = await self.signin.rp.refresh(refresh_token, subject)
        except SignInError:
            self.clear_shared()
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
        had_session = self.get_cookie(TOKEN_COOKIE) or self.get_cookie(REFRESH_COOKIE) \
            or self.get_cookie(SESSION_COOKIE)
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
