"""Web-facing records (/config, banner, locales), UI files, /apidocs.json and the modes."""

import json
import os
import re
import time

import pytest

from dashboard_api.app import server
from dashboard_api.handlers import home
from dashboard_api.serving import routes
from dashboard_api.version import VERSION
from dashboard_api.web import pages
from dashboard_api.web.locales import DEFAULT_IDS
from tests.gateway.helpers import assert_error


def test_config(gateway):
    reply = gateway.get("/config")
    assert reply.status == 200
    body = reply.json()
    assert set(body) == {"serverTime", "version", "authenticationMode", "authenticationModes"}
    assert body["authenticationModes"] == ["token", "kubeconfig"]
    assert isinstance(body["serverTime"], int)
    assert abs(body["serverTime"] - time.time() * 1000) < 5000
    assert body["version"] == VERSION and body["authenticationMode"] == "token"


@pytest.mark.parametrize("path", ["/systembanner", "/api/v1/systembanner"])
def test_default_banner(gateway, path):
    assert gateway.get(path).json() == {"message": "", "severity": "INFO"}


def test_banner_from_flags(start_gateway):
    gw = start_gateway("--system-banner", "Maintenance <b>tonight</b>",
                       "--system-banner-severity", "warning")
    for path in ("/systembanner", "/api/v1/systembanner"):
        assert gw.get(path).json() == {"message": "Maintenance <b>tonight</b>",
                                       "severity": "WARNING"}
    odd = start_gateway("--system-banner", "x", "--system-banner-severity", "PANIC")
    assert odd.get("/api/v1/systembanner").json() == {"message": "x", "severity": "INFO"}


def test_locales(gateway, start_gateway, tmp_path):
    locales = gateway.get("/api/v1/locale").json()["locales"]
    assert [entry["id"] for entry in locales] == list(DEFAULT_IDS)
    assert {"id": "ja", "name": "日本語"} in locales
    conf = tmp_path / "locale_conf.json"
    conf.write_text(json.dumps({"translations": ["en", "fr"]}))
    gw = start_gateway("--locale-config", str(conf))
    assert gw.get("/api/v1/locale").json() == {
        "locales": [{"id": "en", "name": "English"}, {"id": "fr", "name": "Français"}]}


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_web_root_with_single_page_app_fallback(start_gateway, tmp_path):
    root = tmp_path / "ui"
    write(root / "index.html", "<html>index</html>")
    write(root / "main.js", "console.log(1)")
    write(root / "assets" / "config.json", '{"a": 1}')
    gw = start_gateway("--web-root", str(root))

    index = gw.get("/")
    assert index.status == 200 and index.data == b"<html>index</html>"
    assert index.headers["Cache-Control"] == "no-cache, no-store, must-revalidate"
    assert index.headers["Content-Type"].startswith("text/html")
    js = gw.get("/main.js")
    assert js.status == 200 and js.data == b"console.log(1)"
    assert "javascript" in js.headers["Content-Type"]
    assert gw.get("/assets/config.json").json() == {"a": 1}
    for ui_route in ("/workloads", "/pod/default/web-1", "/index.html"):
        reply = gw.get(ui_route)
        assert reply.status == 200 and reply.data == b"<html>index</html>", ui_route
    assert_error(gw.get("/assets/"), 404)
    write(tmp_path / "secret.txt", "outside the web root")
    assert_error(gw.get("/..%2fsecret.txt"), 404)
    # API paths and the web endpoints are not shadowed by the UI files.
    assert_error(gw.get("/api/v1/no-such-route"), 404, "NotFound")
    assert_error(gw.get("/api"), 404)
    assert "serverTime" in gw.get("/config").json()
    # The home page is not served beside a web root: its file names are the UI's routes.
    home = gw.get("/home.js")
    assert home.status == 200 and home.data == b"<html>index</html>"
    assert index.headers["Content-Security-Policy"] == "frame-ancestors 'none'"


def test_web_root_per_locale(start_gateway, tmp_path):
    root = tmp_path / "public"
    write(root / "en" / "index.html", "english")
    write(root / "de" / "index.html", "deutsch")
    write(root / "zh-Hans" / "index.html", "chinese")
    gw = start_gateway("--web-root", str(root))
    assert gw.get("/").data == b"english"
    assert gw.get("/", headers={"Accept-Language": "de-DE,en;q=0.5"}).data == b"deutsch"
    assert gw.get("/x", headers={"Accept-Language": "zh-CN"}).data == b"chinese"
    assert gw.get("/", headers={"Accept-Language": "de", "Cookie": "lang=en"}).data == b"english"


def test_openapi_only_when_enabled(gateway, start_gateway):
    assert_error(gateway.get("/apidocs.json"), 404, "NotFound", ["--enable-openapi"])
    gw = start_gateway("--enable-openapi")
    doc = gw.get("/apidocs.json").json()
    assert doc["openapi"] == "3.0.3" and doc["info"]["version"] == VERSION
    served = server.served_routes("dashboard")
    assert set(doc["paths"]) == {r.template for r in served}
    for route in routes.merged(served):  # every method of a path, whichever route serves it
        assert set(doc["paths"][route.template]) == set(route.methods()), route.template
    assert doc["paths"]["/api/v1/can-i"]["post"]["security"] == [{"bearer": [], "csrf": []}]
    api_doc = start_gateway("--enable-openapi", "--mode", "api").get("/apidocs.json").json()
    assert "/api/v1/login" not in api_doc["paths"] and "/config" not in api_doc["paths"]


def test_mode_api_serves_only_the_api_component(start_gateway, admin_token, tmp_path):
    write(tmp_path / "ui" / "index.html", "ui")
    gw = start_gateway("--mode", "api", "--web-root", str(tmp_path / "ui"))
    for path in ("/config", "/settings", "/systembanner", "/", "/api/v1/me"):
        assert_error(gw.get(path, token=admin_token), 404)
    assert_error(gw.request("POST", "/api/v1/login", body={"token": admin_token},
                            csrf="login"), 404)
    for path in ("/api/v1/systembanner", "/api/v1/settings/global", "/api/v1/locale",
                 "/metrics", "/api/v1/csrftoken/can-i"):
        assert gw.get(path).status == 200, path
    reply = gw.request("POST", "/api/v1/can-i", token=admin_token, csrf="can-i",
                       body={"verb": "get", "resource": "pods"})
    assert reply.json() == {"allowed": True}


def test_mode_dashboard_serves_every_component(gateway, admin_token):
    for path in ("/config", "/settings", "/systembanner", "/api/v1/systembanner", "/metrics"):
        assert gateway.get(path).status == 200, path
    assert gateway.get("/api/v1/me", token=admin_token).status == 200
    # No --web-root: / is the home page (test_home_page_without_web_root).
    assert gateway.get("/").status == 200


def test_unknown_paths_and_methods_get_json_errors(gateway):
    assert_error(gateway.get("/api/v1/nope"), 404, "NotFound")
    assert_error(gateway.request("DELETE", "/config"), 405)


HOME_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
            "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def test_home_page_without_web_root(gateway):
    """Without --web-root, / is the gateway's own page (dashboard_api/web/home) under a strict CSP."""
    for path in ("/", "/index.html"):
        page = gateway.get(path)
        assert page.status == 200, page
        assert page.headers["Content-Type"].startswith("text/html")
        assert page.headers["Content-Security-Policy"] == HOME_CSP
        assert page.headers["X-Frame-Options"] == "DENY"
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert page.headers["Referrer-Policy"] == "no-referrer"
        assert page.headers["Cache-Control"] == "no-cache, no-store, must-revalidate"
        assert b'<script src="home.js" defer></script>' in page.data
        assert "Set-Cookie" not in page.headers
    for name, media in (("home.js", "javascript"), ("home.css", "text/css"),
                        ("favicon.svg", "image/svg+xml")):
        reply = gateway.get("/" + name)
        assert reply.status == 200 and media in reply.headers["Content-Type"], name
        assert reply.headers["Content-Security-Policy"] == HOME_CSP
        with open(os.path.join(pages.HOME_ROOT, name), "rb") as f:
            assert reply.data == f.read()
    # Only the page's own files: anything else is still the JSON 404.
    for path in ("/home.js/", "/main.js", "/home", "/..%2fsetup.py", "/workloads"):
        assert_error(gateway.get(path), 404)
    assert_error(gateway.get("/api/v1/no-such-route"), 404, "NotFound")


def test_home_page_loads_nothing_from_elsewhere_and_runs_no_inline_code():
    """The CSP would block both; this says so before a browser does: every script and style
    is a file of the page, no handler attributes, no other origin."""
    with open(os.path.join(pages.HOME_ROOT, "index.html")) as f:
        html = f.read()
    assert re.findall(r"<script\b[^>]*>", html) == ['<script src="home.js" defer>']
    assert "<style" not in html and not re.search(r"\son\w+\s*=", html)
    assert "style=" not in html
    for name in home.FILES:
        with open(os.path.join(pages.HOME_ROOT, name)) as f:
            text = f.read()
        text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # a name, not a load
        assert not re.search(r"(https?:)?//[\w.-]+\.\w+/", text), name
        if name.endswith(".js"):
            assert "innerHTML" not in text and "insertAdjacentHTML" not in text, name
            assert "eval(" not in text, name
            # Cookies are read once only: the ID token an OpenID Connect sign-in leaves in the
            # `token` cookie, taken into the tab's storage and the cookie dropped.
            taken = text[text.index("function tokenFromSignIn()"):]
            taken = taken[:taken.index("\n  }\n") + 4]
            assert text.count("document.cookie") == taken.count("document.cookie") == 2, name
            # dropped at its path: / or /clusters/{name} (handlers/picker.py, cookie_path)
            assert 'document.cookie = "token=; path=" + COOKIE_PATH + "; max-age=0";' \
                in taken, name


def test_cluster_route(gateway, cluster, admin_token, norights_token):
    """/api/v1/cluster: the API server and its version, for a token the cluster accepts."""
    body = gateway.get("/api/v1/cluster", token=admin_token).json()
    assert body["apiServer"] == cluster.url.rstrip("/")
    assert body["kubernetesVersion"].startswith("v1.20.")
    assert body["platform"].startswith("linux/")
    # Any identity the API server accepts may know which cluster it is.
    assert gateway.get("/api/v1/cluster", token=norights_token).json() == body
    assert_error(gateway.get("/api/v1/cluster"), 401)
    assert_error(gateway.get("/api/v1/cluster", token="not-a-token"), 401)
