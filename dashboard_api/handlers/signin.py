"""Sign-in: CSRF tokens, POST /api/v1/login and GET /api/v1/me.

Login takes ``{"token": ...}`` or ``{"kubeConfig": "<kubeconfig content>"}`` whose current user
carries a token (or an ``auth-provider: oidc`` of the configured provider, whose ID token it
takes: auth/oidc/kubeconfig.py), checks the token with the API server (GET /version: a bad
token is refused there with 401) and answers ``{"token": <the token>}``, which the UI keeps in
its ``token`` cookie. The server keeps no session. /me says whether a token is accepted and, when the token
says so, whose it is.
"""

import re

from dashboard_api.serving import bounded
from dashboard_api.auth.identity import service_account_name
from dashboard_api.auth.kubeconfig import KubeconfigError, credential_from_kubeconfig
from dashboard_api.auth.oidc import kubeconfig as oidc_kubeconfig
from dashboard_api.serving.errors import bad_request, unauthorized
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.handlers.oidc import set_shared_session
from dashboard_api.serving.routes import Route

# Printable ASCII without spaces: anything else cannot travel in an HTTP header.
_TOKEN = re.compile(r"^[\x21-\x7e]+$")
# A token or a kubeconfig: far below the gateway's --max-body-size.
LOGIN_MAX_BODY = 256 * 1024


class CsrfTokenHandler(BaseHandler):
    def get(self, action):
        self.write_json({"token": self.ctx.csrf.issue(self.csrf_action(action))})


class LoginHandler(BaseHandler):
    async def post(self):
        spec = self.json_body()
        if not isinstance(spec, dict):
            raise bad_request("the login body must be a JSON object")
        token = spec.get("token")
        kubeconfig = spec.get("kubeConfig")
        tokens = own_client = None
        if isinstance(token, str) and token.strip():
            token = token.strip()
        elif isinstance(kubeconfig, str) and kubeconfig.strip():
            try:
                token = await bounded.run(credential_from_kubeconfig, kubeconfig) \
                    if len(kubeconfig) > bounded.OFF_LOOP_BYTES \
                    else credential_from_kubeconfig(kubeconfig)
                if isinstance(token, dict):  # auth-provider: oidc
                    tokens, own_client = await oidc_kubeconfig.sign_in(self.ctx.oidc, token)
                    token = tokens.id_token
            except KubeconfigError as exc:
                raise bad_request(str(exc))
        else:
            raise unauthorized()
        if not _TOKEN.match(token):
            raise unauthorized()
        # On a cluster in impersonate mode an ID token of the provider is verified here and
        # the person named with the cluster's credentials (auth/persons.py); else the API
        # server checks the token itself.
        person = await self.ctx.persons.resolve(token) \
            if self.cluster.impersonates and self.ctx.persons is not None else None
        await self.handle_for(token, person).request("GET", "/version")
        if tokens is not None and own_client:
            # Refreshed from now on as a browser sign-in is (handlers/oidc.py).
            set_shared_session(self, self.ctx.oidc, tokens)
        self.write_json({"token": token})


class MeHandler(BaseHandler):
    async def get(self):
        await self.caller().request("GET", "/version")
        if self.person is not None:   # impersonate mode: as the cluster is told the name
            name = self.person.name
        else:
            name = self.request.headers.get("Impersonate-User") or \
                service_account_name(self.token()) or await self._oidc_name()
        self.write_json({"name": name, "authenticated": True} if name
                        else {"authenticated": True})

    async def _oidc_name(self):
        """The user name of an ID token of the configured provider (verified, as the API
        server names the user: its --oidc-username-claim and prefix), or None. Only a token
        naming our provider is checked: /me never waits on the provider for tokens of
        others."""
        persons = self.ctx.persons
        if persons is None:
            return None
        person = await persons.resolve_quietly(self.token())
        return person.name if person is not None else None


ROUTES = [
    Route("/api/v1/csrftoken/{action}", CsrfTokenHandler, "csrftoken", auth=False,
          summary="A one-time CSRF token for POSTs whose first path segment is `action`"),
    Route("/api/v1/login", LoginHandler, "login", component="auth", auth=False, audit=False,
          max_body=LOGIN_MAX_BODY,
          summary="Signs in with {token} or {kubeConfig}; answers {token}"),
    Route("/api/v1/me", MeHandler, "me", component="auth",
          summary="Whether the token is accepted: {authenticated, name?}"),
]
