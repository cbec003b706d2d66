"""In Chromium, against a certified provider and an API server that trusts it (conftest.py):
a person opening the dashboard is sent to the provider's sign-in page, comes back signed in,
and the API answers with exactly what their group may see (403 with the API server's message
elsewhere); the short-lived ID token is refreshed while they work; they sign out here and at
the provider; a second person of another group sees other things; their kubeconfig with an
``auth-provider: oidc`` signs in at the kubeconfig sign-in, refreshed; a replayed callback is
refused with a clear page."""

import time

import pytest
import yaml

from dashboard_api.auth.oidc.refreshcookie import RefreshCookies
from tests.oidc.conftest import TEAMS
from tests.oidc.provider import CLIENT_ID

SIGN_IN_WAIT_MS = 15000


def sign_in(context, setup, login, target="/"):
    """Opens the dashboard in a new page and signs ``login`` in at the provider; returns the
    page, back on the dashboard."""
    page = context.new_page()
    page.goto(setup.url + target)
    # Sent to the provider's own sign-in page.
    assert page.url.startswith(setup.provider.issuer + "/interaction/"), page.url
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "any password")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if page.url.startswith(setup.provider.issuer):  # the provider's consent page
        page.click("button[type=submit]")
    page.wait_for_url(setup.url + "/**", timeout=SIGN_IN_WAIT_MS)
    page.wait_for_function("window.ui !== undefined")
    return page


def api(page, path):
    return page.evaluate("path => window.ui.get(path)", path)


def configmaps(page, namespace):
    reply = api(page, "/api/v1/configmap/" + namespace)
    if reply["status"] != 200:
        return reply["status"], reply["body"]
    # The controller manager's kube-root-ca.crt is in every namespace.
    return 200, sorted(item["objectMeta"]["name"] for item in reply["body"]["items"]
                       if item["objectMeta"]["name"] != "kube-root-ca.crt")


@pytest.fixture
def context(browser):
    # The provider's certificate is of the tests' CA, which Chromium does not know; the
    # gateway and the API server check it with --oidc-ca-file.
    context = browser.new_context(ignore_https_errors=True)
    yield context
    context.close()


def test_sign_in_refresh_sign_out_and_another_group(oidc_setup, browser, context):
    setup = oidc_setup
    page = sign_in(context, setup, "alice", target="/?from=test")
    assert page.url == setup.url + "/?from=test"
    assert api(page, "/api/v1/me")["body"] == {"name": "alice@example.com",
                                                "authenticated": True}
    assert configmaps(page, "oidc-a") == (200, ["oidc-a-settings"])
    status, body = configmaps(page, "oidc-b")
    assert status == 403
    assert body["message"] == ('configmaps is forbidden: User "alice@example.com" cannot '
                               'list resource "configmaps" in API group "" in the namespace '
                               '"oidc-b"')
    # The refresh token is out of the page's reach; the ID token is the UI's to send.
    cookies = {c["name"]: c for c in context.cookies(setup.url + "/oidc/refresh")}
    assert cookies["dashboard_oidc_refresh"]["httpOnly"]
    assert cookies["dashboard_oidc_refresh"]["path"] == "/"
    assert cookies["dashboard_oidc_refresh"]["sameSite"] == "Strict"
    assert "dashboard_oidc_refresh" not in page.evaluate("document.cookie")
    first = page.evaluate("window.ui.token()")

    # The ID token lives 12 s: the gateway's session script refreshes it before then.
    started = time.monotonic()
    page.wait_for_function("token => window.ui.token() && window.ui.token() !== token",
                           arg=first, timeout=20000)
    refreshed_after = time.monotonic() - started
    time.sleep(max(0.0, 13 - refreshed_after))  # past the first token's expiry
    assert configmaps(page, "oidc-a") == (200, ["oidc-a-settings"])
    assert api(page, "/api/v1/me")["status"] == 200

    # The same person's kubeconfig (auth-provider: oidc, as kubectl keeps it) at the kubeconfig
    # sign-in: its ID token has expired, so it is refreshed with its refresh token.
    sealed = {c["name"]: c for c in context.cookies(setup.url + "/oidc/refresh")}[
        "dashboard_oidc_refresh"]["value"]
    refresh_token = RefreshCookies(setup.csrf_key).open(sealed)[0]
    kubeconfig = yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "alice"}}],
        "users": [{"name": "alice", "user": {"auth-provider": {"name": "oidc", "config": {
            "idp-issuer-url": setup.provider.issuer, "client-id": CLIENT_ID,
            "id-token": first, "refresh-token": refresh_token}}}}]})
    login = page.evaluate("""async kubeConfig => {
        const csrf = await (await fetch('/api/v1/csrftoken/login')).json();
        const reply = await fetch('/api/v1/login', {method: 'POST', body: JSON.stringify(
            {kubeConfig}), headers: {'Content-Type': 'application/json',
                                     'X-CSRF-TOKEN': csrf.token}});
        return {status: reply.status, body: await reply.json()};
    }""", kubeconfig)
    assert login["status"] == 200, login
    fresh = login["body"]["token"]
    assert fresh != first and fresh.count(".") == 2
    listed = page.evaluate("""async token => (await fetch('/api/v1/configmap/oidc-b', {
        headers: {Authorization: 'Bearer ' + token}})).status""", fresh)
    assert listed == 403
    listed = page.evaluate("""async token => (await fetch('/api/v1/configmap/oidc-a', {
        headers: {Authorization: 'Bearer ' + token}})).status""", fresh)
    assert listed == 200

    # Sign-out: here, then at the provider (its confirmation page), then back here.
    page.goto(setup.url + "/oidc/logout")
    assert page.url.startswith(setup.provider.issuer), page.url
    page.click("button[name=logout]")
    page.wait_for_url(setup.url + "/oidc/logout", timeout=SIGN_IN_WAIT_MS)
    assert "Signed out" in page.content()
    assert {c["name"] for c in context.cookies(setup.url + "/oidc/refresh")} & {
        "token", "dashboard_oidc_refresh"} == set()
    # Opening the dashboard now goes to the provider's sign-in page again.
    page.goto(setup.url + "/")
    assert page.url.startswith(setup.provider.issuer + "/interaction/"), page.url

    other = browser.new_context(ignore_https_errors=True)
    try:
        bob = sign_in(other, setup, "bob")
        assert api(bob, "/api/v1/me")["body"]["name"] == "bob@example.com"
        assert configmaps(bob, "oidc-b") == (200, ["oidc-b-settings"])
        status, body = configmaps(bob, "oidc-a")
        assert status == 403 and 'User "bob@example.com"' in body["message"]
    finally:
        other.close()
    assert sorted(TEAMS.values()) == ["oidc-a", "oidc-b"]


def test_replayed_callback_refused_and_nothing_signed_in(oidc_setup, browser, context):
    setup = oidc_setup
    seen = []
    context.on("request", lambda request: seen.append(request.url)
               if "/oidc/callback" in request.url else None)
    sign_in(context, setup, "alice")
    [callback] = seen
    # The same callback again, in the browser that finished it (its flow cookie is spent) ...
    page = context.new_page()
    page.goto(callback)
    assert "Sign-in refused" in page.content()
    assert "no sign-in in progress" in page.content()
    # ... and in another browser (an attacker's, or a victim's it was pushed to).
    stranger = browser.new_context(ignore_https_errors=True)
    try:
        page = stranger.new_page()
        response = page.goto(callback)
        assert response.status == 400 and "Nothing was signed in" in page.content()
        assert not [c for c in stranger.cookies(setup.url) if c["name"] == "token"]
    finally:
        stranger.close()


def test_home_page_offers_sign_in_with_the_provider(oidc_setup, context):
    setup = oidc_setup
    page = context.new_page()
    page.goto(setup.home_url + "/")
    link = page.locator("#oidc-signin a")
    link.wait_for(state="visible")
    link.click()
    page.wait_for_url(setup.provider.issuer + "/interaction/**")
    page.fill("input[name=login]", "bob")
    page.fill("input[name=password]", "any password")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    if page.url.startswith(setup.provider.issuer):
        page.click("button[type=submit]")
    page.wait_for_url(setup.home_url + "/", timeout=SIGN_IN_WAIT_MS)
    # Signed in: the page shows the cluster and bob's namespace list (his group's only).
    page.locator("#signout").wait_for(state="visible")
    assert page.locator("#signin").is_hidden()
    # The page took the token from the cookie into its tab's storage, and dropped the cookie.
    assert page.evaluate("sessionStorage.getItem('dashboard-api.token')").count(".") == 2
    assert "token=" not in page.evaluate("document.cookie")
    page.click("#signout")
    page.wait_for_url(setup.provider.issuer + "/**", timeout=SIGN_IN_WAIT_MS)
    page.click("button[name=logout]")
    page.wait_for_url(setup.home_url + "/oidc/logout", timeout=SIGN_IN_WAIT_MS)
    assert "Signed out" in page.content()
