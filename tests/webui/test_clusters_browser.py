"""The web UI of several clusters in headless chromium (issue #28), on the gateways of
tests/gateway/test_clusters_web.py (``clusters_ui``, ``clusters_home``: tests/support/
fixtures.py) serving the kubeconfig contexts "one" (the default) and "two", both the local
cluster, and "hung" (tests/support/manycontexts.py): enough for what a browser does with paths
and cookies. The page (manycontexts.INDEX) stands in for the upstream UI where it matters here:
its calls are relative, it writes a <base> of its own after the gateway's (as upstream's index
does once its config probe answers), and it keeps its token in a `token` cookie set without a
Path."""

import re

from playwright.sync_api import expect

expect.set_options(timeout=20_000)


def paths_asked(page):
    asked = []
    page.on("request", lambda request: asked.append(request))
    return asked


def test_the_cluster_s_base_wins_and_relative_calls_go_to_its_cluster(page, clusters_ui):
    asked = paths_asked(page)
    page.goto(clusters_ui.url + "/clusters/two/")
    expect(page.locator("#base")).to_have_text(clusters_ui.url + "/clusters/two/")
    expect(page.locator("#config")).to_have_text("200 /clusters/two/config")
    paths = [re.sub(r"^https?://[^/]+", "", r.url) for r in asked]
    assert "/clusters/two/config" in paths and "/config" not in paths, paths
    # A deep link of the UI (its router's path): the same base.
    page.goto(clusters_ui.url + "/clusters/two/workloads?namespace=default")
    expect(page.locator("#config")).to_have_text("200 /clusters/two/config")


def test_a_cluster_s_token_cookie_is_not_sent_to_another(page, clusters_ui):
    asked = paths_asked(page)
    page.goto(clusters_ui.url + "/clusters/one/")
    expect(page.locator("#config")).to_have_text("200 /clusters/one/config")
    page.evaluate("document.cookie = 'token=secret-of-one'")   # as the UI signs in
    # The token the gateway is given (the UI sends it as the Bearer; here, the cookie).
    assert page.evaluate("fetch('api/v1/me').then(r => r.status)") == 401
    [cookie] = page.context.cookies()
    assert (cookie["name"], cookie["value"], cookie["path"]) == (
        "token", "secret-of-one", "/clusters/one")

    page.goto(clusters_ui.url + "/clusters/two/")
    expect(page.locator("#config")).to_have_text("200 /clusters/two/config")
    assert page.evaluate("document.cookie") == ""
    assert page.evaluate("fetch('api/v1/me').then(r => r.status)") == 401
    sent = {re.sub(r"^https?://[^/]+", "", r.url): r.all_headers().get("cookie", "")
            for r in asked}
    assert "token=secret-of-one" in sent["/clusters/one/api/v1/me"]
    assert "token=" not in sent["/clusters/two/api/v1/me"]
    assert "token=" not in sent["/clusters/two/config"]


def test_the_picker_at_the_root(page, clusters_ui):
    # A token cookie left at the root (Path=/) would reach every cluster's page: dropped.
    page.context.add_cookies([{"name": "token", "value": "left-at-root",
                               "url": clusters_ui.url + "/"}])
    errors = []   # a CSP violation (its inline style) would be one
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(clusters_ui.url + "/")
    expect(page.locator("h2")).to_have_text("Clusters")
    # Its stylesheet applies (allowed by its hash): the header's background.
    assert page.evaluate("getComputedStyle(document.querySelector('header'))"
                         ".backgroundColor") == "rgb(50, 108, 229)"
    assert errors == []
    links = page.locator("#clusters a")
    expect(links).to_have_text(["one", "two", "hung"])
    assert page.context.cookies() == []
    page.click("text=two")
    expect(page.locator("#config")).to_have_text("200 /clusters/two/config")
    assert page.url == clusters_ui.url + "/clusters/two/"


def test_the_home_page_signs_in_per_cluster(page, clusters_home, cluster, admin_token):
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    asked = paths_asked(page)
    page.goto(clusters_home.url + "/clusters/two/")
    page.fill("#token", admin_token)
    page.click("#signin-form button[type=submit]")
    expect(page.locator("#cluster")).to_have_text(re.compile(
        re.escape(cluster.url) + r" \(Kubernetes v1\.20\.\d+\)"))
    expect(page.locator("#namespaces")).to_contain_text("kube-system")
    expect(page.locator("#pods-title")).to_have_text("Pods in all namespaces")
    paths = {re.sub(r"^https?://[^/]+", "", r.url).split("?")[0] for r in asked}
    assert {"/clusters/two/config", "/clusters/two/api/v1/cluster",
            "/clusters/two/home.js"} <= paths, paths
    assert not [p for p in paths if not p.startswith("/clusters/two/")], paths
    # The token was given to two: another cluster's page in the same tab asks for one.
    page.goto(clusters_home.url + "/clusters/one/")
    expect(page.locator("#signin")).to_be_visible()
    expect(page.locator("#cluster")).to_have_text("shown after sign-in")
    page.goto(clusters_home.url + "/clusters/two/")
    expect(page.locator("#cluster")).to_have_text(re.compile(re.escape(cluster.url)))
    assert errors == []
