"""The gateway as an OpenID Connect relying party: where to send a person, what to make of
what comes back, and how a session is kept alive.

``authorization_url`` sends the browser to the provider with ``state``, ``nonce`` and a PKCE
S256 challenge; ``exchange`` turns the callback's code into tokens at the token endpoint (with
the verifier and, for a confidential client, the client secret) and verifies the ID token;
``refresh`` does the same with a refresh token. The ID token is what the caller then sends to
the API server as its bearer: the API server, with its own ``--oidc-*`` flags, judges who it is.
"""

import re
import time
import urllib.parse

from dashboard_api.auth.oidc import idtoken
from dashboard_api.auth.oidc.flow import challenge
from dashboard_api.auth.oidc.http import ProviderError

# An OAuth error code is a short word (RFC 6749 5.2); anything else is not repeated.
_ERROR_CODE = re.compile(r"^[a-z_]{1,40}$")


class Settings:
    """What the flags say: ``issuer``, ``client_id``, ``client_secret`` (None: a public
    client), ``scopes`` (openid first), ``redirect_url``, ``username_claim``,
    ``groups_claim``, ``algorithms`` (the allow-list of ID token signatures)."""

    def __init__(self, issuer, client_id, redirect_url, client_secret=None,
                 scopes=("openid",), username_claim="sub", groups_claim="groups",
                 algorithms=idtoken.DEFAULT_ALGORITHMS):
        self.issuer = issuer
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = ("openid",) + tuple(s for s in scopes if s != "openid")
        self.redirect_url = redirect_url
        self.username_claim = username_claim
        self.groups_claim = groups_claim
        self.algorithms = tuple(algorithms)


class SignInError(ValueError):
    """The provider refused, or gave something that must be refused: the person signs in
    again (the message is safe to show)."""


class Tokens:
    __slots__ = ("id_token", "refresh_token", "claims")

    def __init__(self, id_token, refresh_token, claims):
        self.id_token, self.refresh_token, self.claims = id_token, refresh_token, claims

    @property
    def expires(self):
        return self.claims["exp"]


def oauth_error(doc):
    """The ``error`` of a provider's answer when it is an OAuth error code, else a stand-in:
    nothing else the provider (or a forged callback) says is repeated to a log or a page."""
    code = (doc or {}).get("error")
    return code if isinstance(code, str) and _ERROR_CODE.match(code) else "no reason given"


class RelyingParty:
    def __init__(self, settings, provider, clock=time.time):
        self.settings = settings
        self.provider = provider
        self._clock = clock

    def username(self, claims):
        """The name the API server will give this person (its --oidc-username-claim), for
        display; prefixed with the issuer as the API server does for claims other than email."""
        name = claims.get(self.settings.username_claim)
        if not isinstance(name, str):
            return None
        if self.settings.username_claim == "email":
            return name
        return "%s#%s" % (self.settings.issuer, name)

    async def authorization_url(self, flow):
        endpoint = await self.provider.endpoint("authorization_endpoint")
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": self.settings.client_id,
            "redirect_uri": self.settings.redirect_url, "scope": " ".join(self.settings.scopes),
            "state": flow.state, "nonce": flow.nonce,
            "code_challenge": challenge(flow.verifier), "code_challenge_method": "S256"})
        return endpoint + ("&" if "?" in endpoint else "?") + query

    async def _token_call(self, form, client=None):
        """A call to the token endpoint as ``client`` ((id, secret or None); default: the
        gateway's own)."""
        client_id, secret = client or (self.settings.client_id, self.settings.client_secret)
        discovery = await self.provider.discovery()
        methods = discovery.get("token_endpoint_auth_methods_supported") or []
        basic = None
        form = dict(form)
        if secret is None:
            form["client_id"] = client_id
        elif "client_secret_post" in methods and "client_secret_basic" not in methods:
            form.update(client_id=client_id, client_secret=secret)
        else:  # RFC 6749 2.3.1: both are form-encoded before Basic
            basic = (urllib.parse.quote(client_id, safe=""), urllib.parse.quote(secret, safe=""))
        return await self.provider.http.fetch(discovery["token_endpoint"], form=form,
                                              basic=basic)

    async def _tokens(self, doc, nonce=None, subject=None, previous_refresh=None,
                      client_id=None):
        id_token = doc.get("id_token")
        if not isinstance(id_token, str):
            raise SignInError("the identity provider gave no ID token")
        claims = await self.verify(id_token, client_id, nonce)
        if subject is not None and claims["sub"] != subject:
            raise SignInError("the refreshed ID token is for another person")
        refresh = doc.get("refresh_token")
        return Tokens(id_token, refresh if isinstance(refresh, str) else previous_refresh,
                      claims)

    async def verify(self, id_token, client_id=None, nonce=None):
        """The claims of an ID token of the provider for ``client_id`` (default: ours);
        SignInError when it must be refused."""
        try:
            return await self.provider.verify(id_token, client_id or self.settings.client_id,
                                              self.settings.algorithms, self._clock(), nonce)
        except idtoken.TokenError as exc:
            raise SignInError(str(exc))

    async def exchange(self, flow, code):
        """Tokens for the callback's ``code`` of ``flow``; SignInError when refused."""
        if not isinstance(code, str) or not code or len(code) > 4096:
            raise SignInError("the identity provider's answer has no code")
        status, doc = await self._token_call({
            "grant_type": "authorization_code", "code": code,
            "redirect_uri": self.settings.redirect_url, "code_verifier": flow.verifier})
        if status != 200 or doc is None:
            raise SignInError("the identity provider refused the code (%s)" % oauth_error(doc))
        return await self._tokens(doc, nonce=flow.nonce)

    async def refresh(self, refresh_token, subject, client=None):
        """Fresh tokens for a refresh token of ``subject`` (None: not known), issued to
        ``client`` ((id, secret or None); default: ours); SignInError when the provider no
        longer allows it (the person signs in again)."""
        if not isinstance(refresh_token, str) or not refresh_token or len(refresh_token) > 4096:
            raise SignInError("no usable refresh token")
        status, doc = await self._token_call({"grant_type": "refresh_token",
                                              "refresh_token": refresh_token}, client)
        if status != 200 or doc is None:
            raise SignInError("the identity provider refused to refresh the session (%s)"
                              % oauth_error(doc))
        return await self._tokens(doc, subject=subject, previous_refresh=refresh_token,
                                  client_id=client[0] if client else None)

    async def logout_url(self, return_url):
        """The provider's RP-initiated logout URL, or None when it offers none. It names the
        client rather than carrying ``id_token_hint``: a token never goes into a URL."""
        try:
            endpoint = await self.provider.endpoint("end_session_endpoint")
        except ProviderError:
            return None
        if endpoint is None:
            return None
        query = {"client_id": self.settings.client_id, "post_logout_redirect_uri": return_url}
        return endpoint + ("&" if "?" in endpoint else "?") + urllib.parse.urlencode(query)
