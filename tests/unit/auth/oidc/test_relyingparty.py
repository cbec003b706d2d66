"""The relying party against a stand-in provider (tests/support/oidc.py): discovery, the keys
cached and refetched at most once per interval, authorization with PKCE S256, state and nonce
sealed in a cookie, code exchange, refresh, and the attacks of issue #29 item 6."""

import asyncio
import base64
import hashlib
import os

import pytest

from dashboard_api.app.options import parse
from dashboard_api.auth import oidc as oidc_mod
from dashboard_api.auth.oidc import flow as flow_mod
from dashboard_api.auth.oidc.flow import FlowError, Flows, safe_return
from dashboard_api.auth.oidc.http import Http, ProviderError
from dashboard_api.auth.oidc.provider import Provider
from dashboard_api.auth.oidc.refreshcookie import RefreshCookies
from dashboard_api.auth.oidc.relyingparty import RelyingParty, Settings, SignInError
from tests.support import oidc

KEY = oidc.RsaKey("k1")
SECRET = os.urandom(32)


class Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def make(secret=None, clock=None):
    fake = oidc.FakeProvider([KEY])
    clock = clock or Clock()
    provider = Provider(oidc.ISSUER, fake, clock=clock, refetch_interval=30)
    settings = Settings(oidc.ISSUER, oidc.CLIENT, "https://dash.test/oidc/callback",
                        client_secret="s3cret:/", scopes=("email", "openid", "groups"))
    return fake, RelyingParty(settings, provider), Flows(secret or SECRET), clock


def run(coro):
    return asyncio.run(coro)


def sign_in(fake, rp, flows, sub="alice", **extra):
    """(flow, cookie, tokens) of a whole sign-in."""
    flow, cookie = flows.start("/#/pod?namespace=a")
    query = oidc.query_of(run(rp.authorization_url(flow)))
    code = fake.grant(query, sub=sub, **extra)
    finished = flows.finish(cookie, query["state"])
    return flow, cookie, code, run(rp.exchange(finished, code))


def test_authorization_url_carries_state_nonce_and_s256_challenge():
    fake, rp, flows, _ = make()
    flow, cookie = flows.start("/x")
    url = run(rp.authorization_url(flow))
    assert url.startswith(oidc.ISSUER + "/auth?")
    query = oidc.query_of(url)
    assert query["response_type"] == "code" and query["client_id"] == oidc.CLIENT
    assert query["scope"] == "openid email groups"
    assert query["redirect_uri"] == "https://dash.test/oidc/callback"
    assert query["state"] == flow.state and query["nonce"] == flow.nonce
    assert query["code_challenge_method"] == "S256"
    digest = hashlib.sha256(flow.verifier.encode()).digest()
    assert query["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    # The verifier never leaves: not in the URL, not readable in the cookie.
    assert flow.verifier not in url and flow.verifier not in cookie and flow.state not in cookie
    assert len(flow.verifier) >= 43


def test_whole_sign_in_and_refresh():
    fake, rp, flows, _ = make()
    flow, _, _, tokens = sign_in(fake, rp, flows)
    assert tokens.claims["sub"] == "alice" and tokens.claims["nonce"] == flow.nonce
    assert tokens.refresh_token.startswith("rt-alice")
    # A confidential client authenticates with Basic (form-encoded id and secret).
    token_calls = [c for c in fake.calls if c[0].endswith("/token")]
    assert token_calls[0][2] == ("dashboard", "s3cret%3A%2F")
    assert token_calls[0][1]["code_verifier"] == flow.verifier
    fresh = run(rp.refresh(tokens.refresh_token, "alice"))
    assert fresh.id_token != tokens.id_token and fresh.refresh_token != tokens.refresh_token
    with pytest.raises(SignInError, match="refused to refresh the session \\(invalid_grant\\)"):
        run(rp.refresh(tokens.refresh_token, "alice"))  # rotated: the old one is spent


def test_refresh_for_another_subject_refused():
    fake, rp, flows, _ = make()
    tokens = sign_in(fake, rp, flows)[3]
    with pytest.raises(SignInError, match="another person"):
        run(rp.refresh(tokens.refresh_token, "mallory"))


def test_public_client_sends_its_id_in_the_form():
    fake, rp, flows, _ = make()
    rp.settings.client_secret = None
    sign_in(fake, rp, flows)
    url, form, basic = [c for c in fake.calls if c[0].endswith("/token")][0]
    assert basic is None and form["client_id"] == oidc.CLIENT and "client_secret" not in form


def test_reused_code_refused():
    fake, rp, flows, _ = make()
    flow, cookie, code, _ = sign_in(fake, rp, flows)
    with pytest.raises(SignInError, match="refused the code \\(invalid_grant\\)"):
        run(rp.exchange(flow, code))


def test_code_with_another_verifier_refused():
    fake, rp, flows, _ = make()
    flow, _ = flows.start("/")
    code = fake.grant(oidc.query_of(run(rp.authorization_url(flow))))
    other, _ = flows.start("/")
    with pytest.raises(SignInError, match="refused the code"):
        run(rp.exchange(other, code))


def test_wrong_state_refused():
    _, _, flows, _ = make()
    flow, cookie = flows.start("/")
    with pytest.raises(FlowError, match="not for the sign-in this browser started"):
        flows.finish(cookie, "forged-state")
    with pytest.raises(FlowError, match="no sign-in in progress"):
        flows.finish(None, flow.state)


def test_cookie_of_another_key_or_altered_refused():
    _, _, flows, _ = make()
    flow, cookie = flows.start("/")
    with pytest.raises(FlowError, match="not one this dashboard made"):
        Flows(os.urandom(32)).finish(cookie, flow.state)
    altered = cookie[:-2] + ("A" if cookie[-2] != "A" else "B") + cookie[-1]
    with pytest.raises(FlowError, match="not one this dashboard made"):
        flows.finish(altered, flow.state)
    # Another replica with the shared secret finishes it.
    assert Flows(SECRET).finish(cookie, flow.state).verifier == flow.verifier


def test_stale_flow_refused():
    clock = Clock()
    flows = Flows(SECRET, clock=clock)
    flow, cookie = flows.start("/")
    clock.now += flow_mod.FLOW_TTL + 1
    with pytest.raises(FlowError, match="longer than 10 minutes"):
        flows.finish(cookie, flow.state)


def test_nonce_mismatch_refused_at_exchange():
    fake, rp, flows, _ = make()
    flow, _ = flows.start("/")
    query = oidc.query_of(run(rp.authorization_url(flow)))
    query["nonce"] = "replayed-nonce"
    code = fake.grant(query)
    with pytest.raises(SignInError, match="nonce"):
        run(rp.exchange(flow, code))


def test_token_for_another_audience_refused_at_exchange():
    fake, rp, flows, _ = make()
    flow, _ = flows.start("/")
    code = fake.grant(oidc.query_of(run(rp.authorization_url(flow))), aud="other-client")
    with pytest.raises(SignInError, match="another audience"):
        run(rp.exchange(flow, code))


def test_unknown_key_refetches_once_per_interval():
    fake, rp, flows, clock = make()
    sign_in(fake, rp, flows)
    jwks_calls = lambda: sum(1 for c in fake.calls if c[0].endswith("/jwks"))  # noqa: E731
    assert jwks_calls() == 1
    # The provider rotates to a new key: the first token with it makes one refetch.
    clock.now += 31
    new = oidc.RsaKey("k2")
    fake.keys.append(new)
    fake.signer = new
    sign_in(fake, rp, flows)
    assert jwks_calls() == 2
    # Tokens with made-up key ids: refused, and no refetch within the interval.
    stranger = oidc.RsaKey("k-unknown")
    fake.signer = stranger
    for _ in range(5):
        with pytest.raises(SignInError, match="does not publish"):
            sign_in(fake, rp, flows)
    assert jwks_calls() == 2
    clock.now += 31
    with pytest.raises(SignInError, match="does not publish"):
        sign_in(fake, rp, flows)
    assert jwks_calls() == 3


def test_discovery_for_another_issuer_refused():
    fake, rp, flows, _ = make()
    fake.discovery["issuer"] = "https://evil.test"
    with pytest.raises(ProviderError, match="another issuer"):
        run(rp.authorization_url(flows.start("/")[0]))
    fake.discovery.update(issuer=oidc.ISSUER, token_endpoint="http://idp.test/token")
    with pytest.raises(ProviderError, match="no HTTPS token_endpoint"):
        run(rp.authorization_url(flows.start("/")[0]))


def test_logout_url_names_the_client_and_carries_no_token():
    fake, rp, flows, _ = make()
    url = run(rp.logout_url("https://dash.test/"))
    assert url.startswith(oidc.ISSUER + "/session/end?")
    assert oidc.query_of(url) == {"client_id": oidc.CLIENT,
                                  "post_logout_redirect_uri": "https://dash.test/"}
    del fake.discovery["end_session_endpoint"]
    _, rp, _, _ = make()
    rp.provider.http.discovery.pop("end_session_endpoint")
    assert run(rp.logout_url("https://dash.test/")) is None


@pytest.mark.parametrize("path", ["https://evil.test/", "//evil.test/x", "/\\evil.test",
                                  "evil.test", "", None, "/a\r\nSet-Cookie: x", "/" + "a" * 2000,
                                  "javascript:alert(1)"])
def test_return_path_never_leaves_the_origin(path):
    assert safe_return(path) == "/"


def test_return_path_kept_when_relative():
    assert safe_return("/#/pod/default?x=1") == "/#/pod/default?x=1"


def test_refresh_cookie_sealed_bound_and_bounded_in_age():
    clock = Clock()
    cookies = RefreshCookies(SECRET, clock=clock, max_age=100)
    value = cookies.seal("rt-secret", "alice")
    assert "rt-secret" not in value
    assert cookies.open(value) == ("rt-secret", "alice", clock.now)
    assert RefreshCookies(os.urandom(32), clock=clock).open(value) is None
    assert cookies.open(value[:-1]) is None and cookies.open("") is None
    # A flow cookie never opens as a refresh cookie (keys derived per purpose).
    assert cookies.open(Flows(SECRET).start("/")[1]) is None
    clock.now += 101
    assert cookies.open(value) is None


def test_http_refuses_plain_http_endpoints():
    with pytest.raises(ProviderError, match="non-HTTPS"):
        run(Http().fetch("http://idp.test/.well-known/openid-configuration"))


def test_flags():
    base = ["--oidc-issuer-url", "https://idp.test", "--oidc-client-id", "dashboard",
            "--oidc-redirect-url", "https://dash.test/oidc/callback"]
    settings = oidc_mod.settings_from(parse(base))
    assert settings.scopes == ("openid", "email", "profile", "groups")
    assert settings.algorithms == ("RS256",) and settings.client_secret is None
    assert oidc_mod.settings_from(parse([])) is None
    for extra, message in (
            (["--oidc-signing-algs", "HS256"], "not allowed"),
            (["--oidc-signing-algs", "none"], "not allowed"),
            (["--oidc-redirect-url", "https://dash.test/elsewhere"], "must end in"),
            (["--oidc-redirect-url", "http://dash.test/oidc/callback"], "https URL"),
            (["--oidc-issuer-url", "http://idp.test"], "https URL"),
            (["--oidc-client-secret-file", "/nonexistent"], "cannot read")):
        with pytest.raises(oidc_mod.OidcConfigError, match=message):
            oidc_mod.settings_from(parse(base + extra))
    loopback = base + ["--oidc-redirect-url", "http://127.0.0.1:9090/oidc/callback"]
    assert oidc_mod.settings_from(parse(loopback)).redirect_url.startswith("http://127")


def test_discovery_kept_while_the_provider_is_down():
    from dashboard_api.auth.oidc import provider as provider_mod
    fake, rp, flows, clock = make()
    first = run(rp.provider.discovery())
    calls = len(fake.calls)

    async def down(url, form=None, basic=None):
        raise ProviderError("unreachable (ConnectionRefusedError)")
    rp.provider.http = type("Down", (), {"fetch": staticmethod(down)})()
    clock.now += provider_mod.DISCOVERY_TTL + 1
    assert run(rp.provider.discovery()) == first
    assert len(fake.calls) == calls
    # Without a document yet, the failure is said.
    fresh = Provider(oidc.ISSUER, rp.provider.http, clock=clock)
    with pytest.raises(ProviderError, match="unreachable"):
        run(fresh.discovery())
