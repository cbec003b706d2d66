"""Sign-in with a kubeconfig whose user has ``auth-provider: oidc`` (what ``kubectl
oidc-login`` and older kubectl write): its ``id-token`` when still good, else a fresh one got
with its ``refresh-token``, the same way the browser's session is refreshed.

Only the provider the gateway is configured with is ever called: a kubeconfig naming another
``idp-issuer-url`` is refused, so a request can never make the gateway reach an address of the
sender's choosing. The kubeconfig's ``client-id`` (and ``client-secret``) are used for its
refresh token, which was issued to that client; when it is the gateway's own client, the
session goes on as a browser sign-in does (the sealed refresh cookie).
"""

import time

from dashboard_api.auth.kubeconfig import KubeconfigError
from dashboard_api.auth.oidc.relyingparty import SignInError, Tokens

MIN_REMAINING = 5  # seconds an ID token must have left to be used as it is


async def sign_in(signin, config):
    """(Tokens, whether the refresh token is for the gateway's own client) of an oidc
    auth-provider config; KubeconfigError says why not."""
    if signin is None:
        raise KubeconfigError("the kubeconfig's user signs in with OpenID Connect, which this "
                              "dashboard is not configured for (--oidc-issuer-url)")
    settings = signin.settings
    if config.get("idp-issuer-url", "").rstrip("/") != settings.issuer.rstrip("/"):
        raise KubeconfigError("the kubeconfig's idp-issuer-url is not this dashboard's "
                              "OpenID provider (%s)" % settings.issuer)
    client_id = config.get("client-id") or settings.client_id
    own = client_id == settings.client_id
    id_token, refresh = config.get("id-token"), config.get("refresh-token")
    failure = None
    if id_token:
        try:
            claims = await signin.rp.verify(id_token, client_id)
            # The verification's leeway is for clock skew; the API server allows none, so a
            # token about to expire is refreshed when it can be.
            if claims["exp"] - time.time() >= MIN_REMAINING or not refresh:
                return Tokens(id_token, refresh, claims), own
        except SignInError as exc:
            failure = exc
    if not refresh:
        raise KubeconfigError("the kubeconfig's ID token is refused (%s) and it has no "
                              "refresh-token" % (failure or "there is none"))
    client = (client_id, settings.client_secret if own else config.get("client-secret"))
    try:
        return await signin.rp.refresh(refresh, None, client), own
    except SignInError as exc:
        raise KubeconfigError("the kubeconfig's session cannot be refreshed: %s" % exc)

