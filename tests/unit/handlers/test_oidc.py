"""The /oidc routes in a gateway application served in this process, with a stand-in
provider (tests/support/oidc.py): cookies and their attributes, the refusal page for replayed
and forged callbacks, no open redirect, refresh, sign-out, the web UI's index page, and no
token or code in a log line. tests/oidc/ runs the same against a real provider."""

import asyncio
import http.cookies
import json
import logging
import os
import urllib.parse

import pytest
import tornado.httpclient
import tornado.httpserver
import tornado.httputil
import tornado.netutil
import tornado.web

from dashboard_api.app import routes as route_table
from dashboard_api.app.context import Context
from dashboard_api.app.options import parse
from dashboard_api.auth.oidc import SignIn
from dashboard_api.auth.oidc.flow import Flows
from dashboard_api.auth.oidc.provider import Provider
from dashboard_api.auth.oidc.refreshcookie import RefreshCookies
from dashboard_api.auth.oidc.relyingparty import RelyingParty, Settings
from dashboard_api.handlers import static
from dashboard_api.serving import requestlog, routes
from dashboard_api.web import pages
from tests.support import oidc

KEY = oidc.RsaKey("k1")
SECRET = os.urandom(32)
REDIRECT = "https://dash.test/oidc/callback"
INDEX = b"<!doctype html><html><head><title>UI</title></head><body>ui</body></html>"


class Browser:
    """Keeps cookies as a browser would (by name; paths and attributes are asserted by the
    tests) and follows nothing."""

    def __init__(self, base):
        self.base = base
        self.jar = {}
        self.client = tornado.httpclient.AsyncHTTPClient(force_instance=True)

    async def call(self, path, method="GET", headers=None, jar=None):
        jar = self.jar if jar is None else jar
        hdrs = dict(headers or {})
        if jar:
            hdrs["Cookie"] = "; ".join("%s=%s" % kv for kv in jar.items())
        response = await self.client.fetch(
            self.base + path, method=method, headers=hdrs, follow_redirects=False,
            raise_error=False, body=b"" if method == "POST" else None)
        response.cookies = {}
        response.cookie_lines = []   # (name, value, path) of every Set-Cookie line
        for line in response.headers.get_list("Set-Cookie"):
            cookie = http.cookies.SimpleCookie(line)
            for name, morsel in cookie.items():
                response.cookies[name] = (morsel.value, morsel, line)
                response.cookie_lines.append((name, morsel.value, morsel["path"]))
                if morsel["max-age"] == "0" or morsel["expires"] and not morsel.value:
                    jar.pop(name, None)
                else:
                    jar[name] = morsel.value
        return response


@pytest.fixture
def served(tmp_path):
    """(fake provider, run) where ``run(scenario)`` runs ``scenario(browser)`` against an
    application with the /oidc routes and a web root."""
    (tmp_path / "index.html").write_bytes(INDEX)
    fake = oidc.FakeProvider([KEY])
    settings = Settings(oidc.ISSUER, oidc.CLIENT, REDIRECT, scopes=("openid", "email"))
    signin = SignIn(RelyingParty(settings, Provider(oidc.ISSUER, fake)), Flows(SECRET),
                    RefreshCookies(SECRET))
    options = parse(["--web-root", str(tmp_path)])
    all_routes = [r for r in route_table.all_routes() if r.template.startswith(("/oidc/",
                                                                           "/config"))]

    def run(scenario, configured=True):
        async def main():
            ctx = Context(options, None, None, routes=all_routes,
                          oidc=signin if configured else None)
            app = tornado.web.Application(
                routes.url_specs(all_routes) + [static.url_spec(str(tmp_path))],
                log_function=requestlog.outgoing)
            app.ctx = ctx
            server = tornado.httpserver.HTTPServer(app)
            [sock] = tornado.netutil.bind_sockets(0, "127.0.0.1")
            server.add_sockets([sock])
            try:
                await scenario(Browser("http://127.0.0.1:%d" % sock.getsockname()[1]))
            finally:
                server.stop()
        asyncio.run(main())
    return fake, run


async def sign_in(browser, fake, back="/%23/pod/default", sub="alice"):
    """A whole sign-in; returns the callback's response."""
    start = await browser.call("/oidc/login?return=" + back)
    assert start.code == 303
    query = oidc.query_of(start.headers["Location"])
    code = fake.grant(query, sub=sub)
    return await browser.call("/oidc/callback?" + urllib.parse.urlencode(
        {"code": code, "state": query["state"]})), query, code


def test_sign_in_sets_the_ui_token_and_a_sealed_refresh_cookie(served, caplog):
    fake, run = served
    caplog.set_level(logging.INFO)

    async def scenario(browser):
        start = await browser.call("/oidc/login?return=/%23/pod/default")
        assert start.code == 303
        location = start.headers["Location"]
        assert location.startswith(oidc.ISSUER + "/auth?")
        value, flow, line = start.cookies[pages.FLOW_COOKIE]
        assert flow["path"] == "/oidc/callback" and flow["httponly"] and flow["secure"]
        assert flow["samesite"] == "Lax" and int(flow["max-age"]) == 600
        query = oidc.query_of(location)
        code = fake.grant(query)
        back = await browser.call("/oidc/callback?" + urllib.parse.urlencode(
            {"code": code, "state": query["state"]}))
        assert back.code == 303 and back.headers["Location"] == "/#/pod/default"
        id_token, token, line = back.cookies["token"]
        assert token["path"] == "/" and not token["httponly"] and token["secure"]
        assert token["samesite"] == "Lax" and 290 <= int(token["max-age"]) <= 300
        sealed, refresh, line = back.cookies[pages.REFRESH_COOKIE]
        assert refresh["path"] == "/" and refresh["httponly"] and refresh["secure"]
        assert refresh["samesite"] == "Strict"
        assert "rt-alice" not in sealed
        assert browser.jar.get(pages.FLOW_COOKIE) is None  # spent
        # The token is the provider's ID token for this sign-in; never in a URL.
        assert oidc.query_of(back.headers["Location"]) == {}
        for response in (start, back):
            assert id_token not in response.headers.get("Location", "")
        # Nothing secret in the log: not the token, the refresh token, the code or state.
        for secret in (id_token, "rt-alice", code, query["state"]):
            assert secret not in caplog.text
        # The request log's "Incoming" line (server.Application) shows the callback so:
        uri = "/oidc/callback?" + urllib.parse.urlencode({"code": code, "state": "s"})
        shown = requestlog.describe_uri(tornado.httputil.HTTPServerRequest(
            start_line=tornado.httputil.RequestStartLine("GET", uri, "HTTP/1.1"),
            headers=tornado.httputil.HTTPHeaders({"Host": "dash.test"})))
        assert shown == "/oidc/callback?code=<redacted>&state=<redacted>"
    run(scenario)


def test_replayed_callback_refused_with_a_clear_page(served):
    fake, run = served

    async def scenario(browser):
        start = await browser.call("/oidc/login")
        flow_cookie = browser.jar[pages.FLOW_COOKIE]
        query = oidc.query_of(start.headers["Location"])
        path = "/oidc/callback?" + urllib.parse.urlencode(
            {"code": fake.grant(query), "state": query["state"]})
        assert (await browser.call(path)).code == 303
        # The same callback again, in the same browser (its flow cookie is gone) ...
        again = await browser.call(path, jar={})
        assert again.code == 400 and "token" not in again.cookies
        assert b"Sign-in refused" in again.body
        assert b"no sign-in in progress" in again.body
        assert again.headers["Content-Type"].startswith("text/html")
        assert "default-src 'none'" in again.headers["Content-Security-Policy"]
        # ... and with the old flow cookie kept by an attacker: the code is spent.
        replay = await browser.call(path, jar={pages.FLOW_COOKIE: flow_cookie})
        assert replay.code == 400 and "token" not in replay.cookies
        assert b"refused the code (invalid_grant)" in replay.body
    run(scenario)


def test_forged_callbacks_refused(served):
    fake, run = served

    async def scenario(browser):
        start = await browser.call("/oidc/login")
        query = oidc.query_of(start.headers["Location"])
        code = fake.grant(query)
        jar = dict(browser.jar)
        wrong_state = await browser.call("/oidc/callback?" + urllib.parse.urlencode(
            {"code": code, "state": "forged"}), jar=dict(jar))
        assert wrong_state.code == 400 and b"not for the sign-in this browser" in wrong_state.body
        # The attacker's own code, in the victim's browser (login CSRF): no flow cookie.
        no_cookie = await browser.call("/oidc/callback?" + urllib.parse.urlencode(
            {"code": code, "state": query["state"]}), jar={})
        assert no_cookie.code == 400
        forged = await browser.call("/oidc/callback?code=x&state=y",
                                    jar={pages.FLOW_COOKIE: "A" * 80})
        assert forged.code == 400 and b"not one this dashboard made" in forged.body
        denied = await browser.call("/oidc/callback?error=access_denied&state="
                                    + query["state"], jar=dict(jar))
        assert denied.code == 400 and b"did not sign you in (access_denied)" in denied.body
        for response in (wrong_state, no_cookie, forged, denied):
            assert "token" not in response.cookies
            assert pages.REFRESH_COOKIE not in response.cookies
    run(scenario)


@pytest.mark.parametrize("back", ["https://evil.test/", "//evil.test/", "/%5Cevil.test",
                                  "https:%2F%2Fevil.test"])
def test_no_redirect_to_another_origin(served, back):
    fake, run = served

    async def scenario(browser):
        response = (await sign_in(browser, fake, back=urllib.parse.quote(back, safe="%")))[0]
        assert response.code == 303 and response.headers["Location"] == "/"
    run(scenario)


def test_refresh_rotates_and_a_refused_refresh_ends_the_session(served):
    fake, run = served

    async def scenario(browser):
        await sign_in(browser, fake)
        first_token, first_refresh = browser.jar["token"], browser.jar[pages.REFRESH_COOKIE]
        refreshed = await browser.call("/oidc/refresh", method="POST")
        assert refreshed.code == 200 and set(json.loads(refreshed.body)) == {"expires"}
        assert browser.jar["token"] != first_token
        assert browser.jar[pages.REFRESH_COOKIE] != first_refresh
        # The spent refresh token (replayed cookie): refused, cookie dropped, 401.
        stale = await browser.call("/oidc/refresh", method="POST",
                                   jar={pages.REFRESH_COOKIE: first_refresh})
        assert stale.code == 401 and pages.REFRESH_COOKIE in stale.cookies
        assert stale.cookies[pages.REFRESH_COOKIE][0] == ""
        # A navigation without a session goes to sign in, keeping where it was going.
        nav = await browser.call("/oidc/refresh?return=/%23/node", jar={})
        assert nav.code == 303
        assert nav.headers["Location"] == "/oidc/login?return=%2F%23%2Fnode"
        ok = await browser.call("/oidc/refresh?return=/%23/node")
        assert ok.code == 303 and ok.headers["Location"] == "/#/node"
    run(scenario)


def test_sign_out_here_and_at_the_provider(served):
    fake, run = served

    async def scenario(browser):
        await sign_in(browser, fake)
        out = await browser.call("/oidc/logout")
        assert out.code == 303
        assert out.headers["Location"].startswith(oidc.ISSUER + "/session/end?")
        assert oidc.query_of(out.headers["Location"]) == {
            "client_id": oidc.CLIENT, "post_logout_redirect_uri": "https://dash.test/oidc/logout"}
        assert "token" not in browser.jar and pages.REFRESH_COOKIE not in browser.jar
        back = await browser.call("/oidc/logout")
        assert back.code == 200 and b"Signed out" in back.body
    run(scenario)


def test_web_ui_index_sends_to_sign_in_and_carries_the_session_script(served):
    fake, run = served

    async def scenario(browser):
        first = await browser.call("/")
        assert first.code == 303 and first.headers["Location"] == "/oidc/refresh?return=%2F"
        local = await browser.call("/?sign-in=token")
        assert local.code == 200 and local.body.startswith(INDEX[:40])
        await sign_in(browser, fake)
        page = await browser.call("/")
        assert page.code == 200 and b'<script src="/oidc/session.js"></script></head>' \
            in page.body
        script = await browser.call("/oidc/session.js")
        assert script.code == 200 and b'var ISSUER = "https://idp.test";' in script.body
        assert script.headers["Content-Type"].startswith("text/javascript")
    run(scenario)


def test_routes_answer_404_when_not_configured(served):
    fake, run = served

    async def scenario(browser):
        for path in ("/oidc/login", "/oidc/callback", "/oidc/logout", "/oidc/session.js"):
            response = await browser.call(path)
            assert response.code == 404
            assert b"not configured (--oidc-issuer-url)" in response.body
        index = await browser.call("/")
        assert index.code == 200 and index.body == INDEX
        config = await browser.call("/config")
        assert json.loads(config.body)["authenticationModes"] == [
            "token", "kubeconfig"]
    run(scenario, configured=False)


def test_config_lists_oidc(served):
    fake, run = served

    async def scenario(browser):
        config = await browser.call("/config")
        assert json.loads(config.body)["authenticationModes"] == [
            "token", "kubeconfig", "oidc"]
    run(scenario)


def test_a_callback_error_is_never_repeated_verbatim(served, caplog):
    fake, run = served
    caplog.set_level(logging.INFO)

    async def scenario(browser):
        start = await browser.call("/oidc/login")
        state = oidc.query_of(start.headers["Location"])["state"]
        response = await browser.call("/oidc/callback?" + urllib.parse.urlencode(
            {"error": "FAKE LOG LINE <script>", "state": state}))
        assert response.code == 400 and b"did not sign you in (no reason given)" in response.body
        assert "FAKE LOG LINE" not in caplog.text
    run(scenario)
