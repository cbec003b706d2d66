"""Several clusters behind one gateway, as a browser and the API's callers meet them (issue
#28): GET /api/v1/clusters, the <base> of the web UI's and the home page's index under
/clusters/{name}/, and the cluster picker at / and /clusters/. The gateways (``clusters_ui``,
``clusters_home``: tests/support/fixtures.py, shared with tests/webui/test_clusters_browser.py)
serve a kubeconfig whose contexts "one" and "two" both name the local cluster (tests/support/
manycontexts.py), plus "hung", an address that accepts connections and never answers."""

import re
import time

from tests.gateway.helpers import assert_error
from tests.support import manycontexts
from tests.support.gateway import Gateway


def test_clusters_need_a_token_the_path_s_cluster_accepts(clusters_ui, admin_token):
    for path in ("/api/v1/clusters", "/clusters/two/api/v1/clusters"):
        assert_error(clusters_ui.get(path), 401)
        assert_error(clusters_ui.get(path, token="not-a-token"), 401)
    # The hung cluster's own path: the token is checked there, and there only.
    started = time.monotonic()
    reply = clusters_ui.get("/clusters/hung/api/v1/clusters", token=admin_token)
    assert reply.status in (502, 504), reply
    assert time.monotonic() - started < 45


def test_clusters_list_answers_at_once_with_what_is_known(clusters_ui, cluster, admin_token):
    started = time.monotonic()
    body = clusters_ui.get("/clusters/two/api/v1/clusters", token=admin_token).json()
    assert time.monotonic() - started < 2.5   # the hung cluster's probe is not waited for
    by_name = {c["name"]: c for c in body["clusters"]}
    assert [c["name"] for c in body["clusters"]] == ["one", "two", "hung"]
    for name in ("one", "two", "hung"):
        entry = by_name[name]
        assert set(entry) == {"name", "server", "version", "reachable", "cache", "default",
                              "path", "authMode", "usable"}
        assert entry["authMode"] == "forward"
        # A pasted token: known usable at its own cluster only, never sent to another.
        assert entry["usable"] is (True if name == "two" else None)
        assert entry["path"] == "/clusters/%s/" % name
        assert entry["default"] is (name == "one")
        assert entry["cache"] in ("stopped", "syncing", "synced")
    assert by_name["one"]["server"] == by_name["two"]["server"] == cluster.url.rstrip("/")
    assert re.match(r"^https://127\.0\.0\.1:\d+$", by_name["hung"]["server"])
    # The path's own cluster answered the caller's token just now.
    assert by_name["two"]["reachable"] is True
    assert by_name["two"]["version"].startswith("v1.20.")
    assert by_name["hung"]["version"] is None
    # The probes land: one answers, hung is found unreachable after its deadline (3 s).
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        started = time.monotonic()
        body = clusters_ui.get("/api/v1/clusters", token=admin_token).json()
        assert time.monotonic() - started < 2.5
        by_name = {c["name"]: c for c in body["clusters"]}
        if by_name["hung"]["reachable"] is False and by_name["one"]["reachable"]:
            break
        time.sleep(0.5)
    assert by_name["one"]["reachable"] is True and by_name["one"]["version"].startswith("v1.20.")
    assert by_name["hung"]["reachable"] is False and by_name["hung"]["version"] is None


def test_the_ui_index_gets_its_cluster_s_base(clusters_ui):
    for path in ("/clusters/two/", "/clusters/two", "/clusters/two/index.html",
                 "/clusters/two/workload?namespace=default"):
        page = clusters_ui.get(path)
        assert page.status == 200, (path, page)
        assert page.headers["Content-Type"].startswith("text/html")
        assert page.data == manycontexts.INDEX.replace(
            b"<head>", b'<head><base href="/clusters/two/">')
        assert page.headers["Cache-Control"] == "no-cache, no-store, must-revalidate"
        assert page.headers["X-Frame-Options"] == "DENY"
    # The UI's other files are the files, unchanged; the API is the cluster's.
    assert clusters_ui.get("/clusters/one/main.js").data == manycontexts.SCRIPT
    assert clusters_ui.get("/clusters/one/config").status == 200
    assert_error(clusters_ui.get("/clusters/none/"), 404,
                 message_has=("no cluster named none",))


def assert_picker(reply, names=("one", "two", "hung")):
    assert reply.status == 200, reply
    assert reply.headers["Content-Type"].startswith("text/html")
    csp = reply.headers["Content-Security-Policy"]
    assert csp.startswith("default-src 'none'; style-src 'sha256-") and "script-src" not in csp
    assert "frame-ancestors 'none'" in csp and "form-action 'none'" in csp
    assert reply.headers["Cache-Control"] == "no-cache, no-store, must-revalidate"
    links = re.findall(rb'<a href="([^"]+)">([^<]+)</a>', reply.data)
    assert links == [(b"/clusters/%s/" % n.encode(), n.encode()) for n in names]
    assert b"<script" not in reply.data
    # A token cookie of the root would reach every cluster's page: dropped.
    [cookie] = reply.headers.getlist("Set-Cookie")
    assert cookie.startswith('token=""; ') or cookie.startswith("token=; "), cookie
    assert "Path=/" in cookie.split("; ") and "expires=" in cookie.lower()


def test_the_root_picks_a_cluster_when_several(clusters_ui, clusters_home):
    for gw in (clusters_ui, clusters_home):
        for path in ("/", "/index.html", "/clusters/", "/clusters"):
            assert_picker(gw.get(path))
    # The UI is never served at the root: its deep links get the picker too.
    assert_picker(clusters_ui.get("/workload"))
    # The API at the root is still the default cluster's.
    assert clusters_ui.get("/config").status == 200


def test_the_list_starts_no_other_cluster(clusters_home, admin_token):
    """Only the path's cluster is used by asking for the list: the others' watch caches stay
    as they are (here, never started)."""
    body = clusters_home.get("/clusters/two/api/v1/clusters", token=admin_token).json()
    caches = {c["name"]: c["cache"] for c in body["clusters"]}
    assert caches["hung"] == "stopped" and caches["two"] in ("syncing", "synced")


def test_the_home_page_under_a_cluster_path(clusters_home):
    page = clusters_home.get("/clusters/two/")
    assert page.status == 200, page
    assert page.data.startswith(b'<!doctype html>\n<html lang="en">\n<head>'
                                b'<base href="/clusters/two/">\n<meta charset="utf-8">')
    # Its own <base> is allowed there (the path's), no other origin's.
    assert "base-uri 'self'" in page.headers["Content-Security-Policy"]
    assert clusters_home.get("/clusters/two/home.js").status == 200


def test_one_cluster_serves_its_ui_at_the_root(cluster, tmp_path):
    path = manycontexts.write(str(tmp_path / "kubeconfig"), cluster, contexts=("solo",),
                              current="solo")
    web_root = tmp_path / "webroot"
    web_root.mkdir()
    manycontexts.write_web_root(web_root)
    gw = Gateway.start(cluster, "--kubeconfig", path, "--web-root", str(web_root),
                       kubeconfig=False)
    try:
        root = gw.get("/")
        assert root.status == 200 and root.data == manycontexts.INDEX
        assert "Set-Cookie" not in root.headers
        assert gw.get("/clusters/solo/").data.startswith(
            b'<!doctype html>\n<html><head><base href="/clusters/solo/">')
        assert_picker(gw.get("/clusters/"), names=("solo",))
    finally:
        gw.stop()
