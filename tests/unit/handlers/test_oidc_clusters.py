"""OpenID Connect sign-in with several clusters (issue #28), in an application served in this
process with the stand-in provider (as tests/unit/handlers/test_oidc.py): a sign-in started
from a cluster's path sets its cookies for that cluster's path only, returns there (never to
another cluster's page), is refreshed and ended there; the web UI's index there gets its
cluster's <base> and session script; a sign-in at the root is the default cluster's."""

import asyncio
import types
import urllib.parse

import pytest
import tornado.httpserver
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
from dashboard_api.auth.oidc.sessioncookie import SessionCookies
from dashboard_api.handlers import picker, static
from dashboard_api.serving import requestlog, routes
from dashboard_api.serving.paths import split_path
from dashboard_api.web import pages
from tests.support import oidc
from tests.unit.handlers.test_oidc import INDEX, KEY, REDIRECT, SECRET, Browser


class ClusterPaths(tornado.web.Application):
    """Routes /clusters/{name}/... as the path within the cluster, as app/server.py's
    Application does (its other duties are not these tests')."""

    def find_handler(self, request, **kwargs):
        name, inner = split_path(request.path)
        request.cluster_name = name
        if name is None:
            return super().find_handler(request, **kwargs)
        full, request.path = request.path, inner
        try:
            return super().find_handler(request, **kwargs)
        finally:
            request.path = full


class Clusters(list):
    default_name = "one"


@pytest.fixture
def served(tmp_path):
    (tmp_path / "index.html").write_bytes(INDEX)
    fake = oidc.FakeProvider([KEY])
    settings = Settings(oidc.ISSUER, oidc.CLIENT, REDIRECT, scopes=("openid", "email"))
    signin = SignIn(RelyingParty(settings, Provider(oidc.ISSUER, fake)), Flows(SECRET),
                    RefreshCookies(SECRET), SessionCookies(SECRET))
    options = parse(["--web-root", str(tmp_path)])
    oidc_routes = [r for r in route_table.all_routes() if r.template.startswith("/oidc/")]
    clusters = Clusters([types.SimpleNamespace(name="one", default=True),
                         types.SimpleNamespace(name="two", default=False)])

    def run(scenario):
        async def main():
            app = ClusterPaths(routes.url_specs(oidc_routes)
                               + [picker.url_spec(), static.url_spec(str(tmp_path))],
                               log_function=requestlog.outgoing)
            app.ctx = Context(options, None, clusters, routes=oidc_routes, oidc=signin)
            server = tornado.httpserver.HTTPServer(app)
            [sock] = tornado.netutil.bind_sockets(0, "127.0.0.1")
            server.add_sockets([sock])
            try:
                await scenario(Browser("http://127.0.0.1:%d" % sock.getsockname()[1]))
            finally:
                server.stop()
        asyncio.run(main())
    return fake, run


async def sign_in(browser, fake, start):
    """A whole sign-in begun at ``start``; returns the callback's response (at the one
    configured redirect URL's path, /oidc/callback)."""
    login = await browser.call(start)
    assert login.code == 303, login.body
    assert login.cookies[pages.FLOW_COOKIE][1]["path"] == "/oidc/callback"
    query = oidc.query_of(login.headers["Location"])
    assert query["redirect_uri"] == REDIRECT
    code = fake.grant(query)
    return await browser.call("/oidc/callback?" + urllib.parse.urlencode(
        {"code": code, "state": query["state"]}))


def test_a_sign_in_from_a_cluster_s_path_is_that_cluster_s(served):
    fake, run = served

    async def scenario(browser):
        back = await sign_in(browser, fake,
                             "/clusters/two/oidc/login?return=/clusters/two/%23/pod")
        assert back.code == 303 and back.headers["Location"] == "/clusters/two/#/pod"
        token = back.cookies["token"][1]
        assert token["path"] == "/clusters/two" and token["samesite"] == "Lax"
        # The sign-in's own cookies are the whole gateway's (one sign-in, every cluster).
        refresh = back.cookies[pages.REFRESH_COOKIE][1]
        assert refresh["path"] == "/" and refresh["httponly"] and refresh["samesite"] == "Strict"
        session = back.cookies[pages.SESSION_COOKIE][1]
        assert session["path"] == "/" and session["httponly"] and session["samesite"] == "Lax"
        assert back.cookies["token"][0] not in back.cookies[pages.SESSION_COOKIE][0]  # sealed
        # Refreshed at the cluster's path: the token cookie for that path again.
        renewed = await browser.call("/clusters/two/oidc/refresh", method="POST")
        assert renewed.code == 200
        assert renewed.cookies["token"][1]["path"] == "/clusters/two"
        # Signed out there: every UI's token cookie and the shared ones dropped.
        out = await browser.call("/clusters/two/oidc/logout")
        dropped = {(name, path) for name, value, path in out.cookie_lines if value == ""}
        assert {("token", "/"), ("token", "/clusters/one"), ("token", "/clusters/two"),
                (pages.REFRESH_COOKIE, "/"), (pages.SESSION_COOKIE, "/")} <= dropped
    run(scenario)


def test_one_sign_in_serves_every_cluster_without_the_provider(served):
    fake, run = served

    async def scenario(browser):
        await sign_in(browser, fake, "/clusters/two/oidc/login")
        calls = len(fake.calls)
        browser.jar.pop("token")   # Path=/clusters/two: not sent to /clusters/one/
        # Another cluster's UI without a token of its own goes through its refresh, which
        # sets its token cookie from the session: no sign-in page, no call to the provider.
        first = await browser.call("/clusters/one/")
        assert first.code == 303 and "/clusters/one/oidc/refresh?" in first.headers["Location"]
        back = await browser.call(first.headers["Location"])
        assert back.code == 303 and back.headers["Location"] == "/clusters/one/"
        assert back.cookies["token"][1]["path"] == "/clusters/one"
        renewed = await browser.call("/clusters/one/oidc/refresh", method="POST")
        assert renewed.code == 200 and renewed.cookies["token"][1]["path"] == "/clusters/one"
        assert len(fake.calls) == calls
        # An ID token near its end is renewed with the refresh token (a call to the token
        # endpoint, still no sign-in page), and the session follows.
        fake.lifetime = 1
        await sign_in(browser, fake, "/clusters/two/oidc/login")
        fake.lifetime = 300
        calls = len(fake.calls)
        again = await browser.call("/clusters/one/oidc/refresh", method="POST")
        assert again.code == 200 and pages.SESSION_COOKIE in again.cookies
        assert [c for c in fake.calls[calls:] if c[0].endswith("/token")]
        # Signed out at one cluster: nothing to refresh at the other any more.
        await browser.call("/clusters/one/oidc/logout")
        assert (await browser.call("/clusters/two/oidc/refresh", method="POST")).code == 401
    run(scenario)


def test_a_planted_session_cookie_is_refused(served):
    fake, run = served

    async def scenario(browser):
        browser.jar[pages.SESSION_COOKIE] = oidc.token(KEY, oidc.claims())   # not sealed
        assert (await browser.call("/clusters/one/oidc/refresh", method="POST")).code == 401
    run(scenario)


@pytest.mark.parametrize("back", ["/clusters/one/", "/", "/clusters/two/../one/",
                                  "/clusters/two/%2e%2e/one/", "/clusters/twofold/",
                                  "https://evil.test/clusters/two/"])
def test_a_sign_in_returns_within_its_cluster_only(served, back):
    fake, run = served

    async def scenario(browser):
        answer = await sign_in(browser, fake, "/clusters/two/oidc/login?return="
                               + urllib.parse.quote(back, safe=""))
        assert answer.code == 303 and answer.headers["Location"] == "/clusters/two/"
        assert answer.cookies["token"][1]["path"] == "/clusters/two"
    run(scenario)


def test_a_sign_in_at_the_root_is_the_default_cluster_s(served):
    fake, run = served

    async def scenario(browser):
        back = await sign_in(browser, fake, "/oidc/login")
        assert back.code == 303 and back.headers["Location"] == "/clusters/one/"
        assert back.cookies["token"][1]["path"] == "/clusters/one"
        assert back.cookies[pages.REFRESH_COOKIE][1]["path"] == "/"
    run(scenario)


def test_the_ui_index_of_a_cluster(served):
    fake, run = served

    async def scenario(browser):
        first = await browser.call("/clusters/two/")
        assert first.code == 303
        assert first.headers["Location"] == \
            "/clusters/two/oidc/refresh?return=%2Fclusters%2Ftwo%2F"
        nav = await browser.call(first.headers["Location"])
        assert nav.headers["Location"] == \
            "/clusters/two/oidc/login?return=%2Fclusters%2Ftwo%2F"
        await sign_in(browser, fake, nav.headers["Location"])
        page = await browser.call("/clusters/two/")
        assert page.code == 200
        assert page.body == INDEX.replace(b"<head>", b'<head><base href="/clusters/two/">') \
            .replace(b"</head>", b'<script src="/clusters/two/oidc/session.js"></script></head>')
        script = await browser.call("/clusters/two/oidc/session.js")
        assert b'var BASE = "/clusters/two/";' in script.body
        assert b'fetch(BASE + "oidc/refresh"' in script.body
        # The root is the picker, which drops a token cookie of the root.
        root = await browser.call("/")
        assert root.code == 200 and b'<a href="/clusters/two/">two</a>' in root.body
        assert root.cookies["token"][0] == "" and root.cookies["token"][1]["path"] == "/"
    run(scenario)


def test_safe_return_within_a_cluster():
    from dashboard_api.auth.oidc.flow import safe_return
    base = "/clusters/b/"
    for kept in ("/clusters/b/", "/clusters/b", "/clusters/b/#/pod", "/clusters/b?x=1",
                 "/clusters/b/workloads?namespace=a"):
        assert safe_return(kept, base) == kept
    for refused in ("/", "/clusters/a/", "/clusters/bb/", "/clusters/b/../a/",
                    "/clusters/b/%2E%2E/a/", "/clusters/b/./", "//evil.test/clusters/b/",
                    None, "/clusters/b/" + "x" * 2000):
        assert safe_return(refused, base) == base
    # The root's rules stay as they were.
    assert safe_return("/anything/../x") == "/anything/../x"
    assert safe_return("https://evil.test/") == "/"
