"""Kubeconfig sign-in of a user with ``auth-provider: oidc`` (auth/oidc/kubeconfig.py) against
a stand-in provider: its ID token when good, else refreshed as the browser's session is; only
the configured provider is ever called."""

import asyncio
import os
import time

import pytest

from dashboard_api.auth.kubeconfig import KubeconfigError, credential_from_kubeconfig
from dashboard_api.auth.oidc import SignIn
from dashboard_api.auth.oidc.flow import Flows
from dashboard_api.auth.oidc.kubeconfig import sign_in
from dashboard_api.auth.oidc.provider import Provider
from dashboard_api.auth.oidc.refreshcookie import RefreshCookies
from dashboard_api.auth.oidc.relyingparty import RelyingParty, Settings
from tests.support import oidc

KEY = oidc.RsaKey("k1")
SECRET = os.urandom(32)

KUBECONFIG = """
apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: alice}}]
users:
- name: alice
  user:
    auth-provider:
      name: oidc
      config: %s
"""


def make():
    fake = oidc.FakeProvider([KEY])
    settings = Settings(oidc.ISSUER, oidc.CLIENT, "https://dash.test/oidc/callback",
                        client_secret="gateway-secret")
    return fake, SignIn(RelyingParty(settings, Provider(oidc.ISSUER, fake)), Flows(SECRET),
                        RefreshCookies(SECRET))


def config(**values):
    base = {"idp-issuer-url": oidc.ISSUER, "client-id": oidc.CLIENT}
    base.update(values)
    return {k: v for k, v in base.items() if v is not None}


def test_kubeconfig_yields_the_provider_config():
    text = KUBECONFIG % '{idp-issuer-url: "https://idp.test", id-token: a.b.c, ' \
                        'refresh-token: rt, client-id: dashboard, extra: [1]}'
    assert credential_from_kubeconfig(text) == {
        "idp-issuer-url": "https://idp.test", "id-token": "a.b.c", "refresh-token": "rt",
        "client-id": "dashboard"}


def test_good_id_token_used_as_it_is():
    fake, signin = make()
    token = oidc.token(KEY, oidc.claims(nonce=None))
    tokens, own = asyncio.run(sign_in(signin, config(**{"id-token": token})))
    assert tokens.id_token == token and own
    assert not [c for c in fake.calls if c[0].endswith("/token")]


def test_expired_id_token_refreshed_with_the_refresh_token():
    fake, signin = make()
    fake.refresh_tokens["rt-1"] = "alice"
    expired = oidc.token(KEY, oidc.claims(exp=int(time.time()) - 600, iat=1))
    tokens, own = asyncio.run(sign_in(signin, config(**{"id-token": expired,
                                                        "refresh-token": "rt-1"})))
    assert tokens.id_token != expired and tokens.claims["sub"] == "alice" and own
    assert tokens.refresh_token != "rt-1"  # rotated by the provider
    [(url, form, basic)] = [c for c in fake.calls if c[0].endswith("/token")]
    assert form == {"grant_type": "refresh_token", "refresh_token": "rt-1"}
    assert basic == (oidc.CLIENT, "gateway-secret")


def test_another_client_refreshes_with_its_own_credentials():
    fake, signin = make()
    fake.refresh_tokens["rt-k"] = "alice"
    fake.signer = KEY
    fake.lifetime = 300
    # The provider's token for client "kubectl" names it as audience.
    original = fake._id_token
    fake._id_token = lambda sub, nonce=None, **extra: original(sub, nonce, aud="kubectl")
    tokens, own = asyncio.run(sign_in(signin, config(**{
        "client-id": "kubectl", "client-secret": "kubectl-secret", "refresh-token": "rt-k"})))
    assert not own and tokens.claims["aud"] == "kubectl"
    assert [c[2] for c in fake.calls if c[0].endswith("/token")] == [
        ("kubectl", "kubectl-secret")]


@pytest.mark.parametrize("values, message", [
    ({"idp-issuer-url": "https://evil.test"}, "not this dashboard's OpenID provider"),
    ({"idp-issuer-url": None}, "not this dashboard's OpenID provider"),
    ({"id-token": "x.y.z"}, "no refresh-token"),
    ({}, "no refresh-token"),
    ({"refresh-token": "spent"}, "cannot be refreshed: the identity provider refused"),
])
def test_refused(values, message):
    fake, signin = make()
    with pytest.raises(KubeconfigError, match=message):
        asyncio.run(sign_in(signin, config(**values)))
    # Nothing but the configured provider was ever called.
    assert all(url.startswith(oidc.ISSUER + "/") for url, _, _ in fake.calls)


def test_refused_without_oidc_configured():
    with pytest.raises(KubeconfigError, match="not configured for \\(--oidc-issuer-url\\)"):
        asyncio.run(sign_in(None, config()))


def test_id_token_about_to_expire_refreshed():
    fake, signin = make()
    fake.refresh_tokens["rt-2"] = "alice"
    # Within the verification's leeway, but the API server would refuse it.
    stale = oidc.token(KEY, oidc.claims(exp=int(time.time()) - 1, nonce=None))
    tokens, _ = asyncio.run(sign_in(signin, config(**{"id-token": stale,
                                                      "refresh-token": "rt-2"})))
    assert tokens.id_token != stale and tokens.expires > time.time() + 100
