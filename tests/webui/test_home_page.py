"""The gateway's own home page (dashboard_api/web/home) in headless chromium, on a gateway without
--web-root against the local cluster, with the metrics sidecar as bin/dashboard runs it: what
runs, sign-in with a real token (and a wrong one), namespaces, a pod of the test with its status,
CPU and memory, and its log; cluster data with markup stays text; the lists update by themselves
(pushed notices), and the page says when the cluster's API server does not answer."""

import os
import re
import time

import pytest
from playwright.sync_api import expect

from dashboard_api.version import VERSION
from tests.faults.conftest import FLAGS as FAULT_FLAGS
from tests.faults.proxy import FaultProxy
from tests.logs.kube import run_pod, wait_pod
from tests.metrics.sidecar import Sidecar, sidecar_identity, wait_points
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for

# An image reference is not checked by the API server; the simulated node writes it into the
# container's first log line ("starting container app (image ..., instance 0)").
MARKUP = '<img src=x onerror="window.injected=1">'
CPU = re.compile(r"^\d+(\.\d+)?m$|^\d+\.\d\d cores$")
MEMORY = re.compile(r"^\d+(\.\d)? (B|KiB|MiB|GiB)$")
SCREENSHOT = "/tmp/dashboard-home-page.png"
# As long as the page fixture's own timeout (tests/webui/conftest.py): a loaded machine is slow.
expect.set_options(timeout=20_000)


@pytest.fixture(scope="module")
def home_ns(cluster):
    """Pod ``hello``, which writes 'line 1'..'line 3' after its start-up lines."""
    namespace = cluster.new_namespace("home")
    run_pod(cluster, namespace, "hello", annotations={"log-lines": 3})
    yield namespace
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


@pytest.fixture(scope="module")
def markup_pod(cluster, home_ns):
    """Pod ``markup``, whose image reference (and so its first log line) holds markup."""
    body = {"metadata": {"name": "markup"},
            "spec": {"containers": [{"name": "app", "image": "busybox" + MARKUP}],
                     "automountServiceAccountToken": False}}
    status, reply = cluster.request("POST", "/api/v1/namespaces/%s/pods" % home_ns, body)
    assert status == 201, reply
    wait_pod(cluster, home_ns, "markup", lambda pod: pod["status"].get("phase") == "Running")
    return "markup"


@pytest.fixture(scope="module")
def home_gateway(cluster, home_ns, tmp_path_factory):
    """A gateway without --web-root, its metrics from a sidecar scraping every second with the
    sidecar's own least-rights identity (as bin/dashboard runs one every 10 s)."""
    token, role = sidecar_identity(cluster, home_ns)
    kubeconfig = cluster.metrics_kubeconfig(
        str(tmp_path_factory.mktemp("home") / "sidecar.kubeconfig"), token)
    sidecar = Sidecar(kubeconfig, resolution="1s", duration="30s").start()
    gw = None
    try:
        wait_points(sidecar, "/api/v1/pod/" + home_ns, 1)
        gw = Gateway.start(cluster, "--sidecar-host", sidecar.url,
                           "--metric-client-check-period", "0.5s")
        gw.wait_cache_synced()
        yield gw
    finally:
        if gw:
            gw.stop()
        sidecar.stop()
        cluster.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" + role)
        cluster.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + role)


def sign_in(page, token):
    page.fill("#token", token)
    page.click("#signin-form button[type=submit]")


def pod_row(page, name):
    return page.locator("#pods tbody tr[data-pod='%s']" % name)


def cells(page, name):
    return pod_row(page, name).locator("td").all_text_contents()


def wait_for_metrics(page, name, timeout=30):
    """The pod's row once CPU and memory are numbers (the gateway's first sidecar health check
    may not have passed when the page loads): Refresh, as a person would."""
    deadline = time.monotonic() + timeout
    while True:
        row = cells(page, name)
        if row and row[4] != "-" and row[5] != "-":
            return row
        assert time.monotonic() < deadline, "no CPU and memory for %s: %r (%s)" % (
            name, row, page.text_content("#pods-note"))
        time.sleep(0.5)
        page.click("#refresh")
        expect(pod_row(page, name)).to_be_visible()


def test_the_home_page_signs_in_and_shows_the_cluster(page, home_gateway, home_ns, cluster,
                                                      admin_token):
    gw = home_gateway
    # Whatever the CSP blocked or failed to load would be a console error.
    errors = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(gw.url + "/")
    expect(page.locator("#version")).to_have_text(VERSION)
    expect(page.locator("#cluster")).to_have_text("shown after sign-in")
    expect(page.locator("#webui")).to_contain_text("bin/dashboard --web-root ./dashboard-web")

    # A wrong token: a clear message, nothing kept, still the sign-in form.
    sign_in(page, "not-a-token-of-this-cluster")
    expect(page.locator("#signin-message")).to_have_text(
        "The cluster did not accept this token (401 Unauthorized). Check that you pasted the "
        "whole token (bin/dashboard prints one for its local cluster).")
    assert page.is_hidden("#overview")
    assert page.evaluate("sessionStorage.length") == 0

    sign_in(page, admin_token)
    expect(page.locator("#cluster")).to_have_text(re.compile(
        re.escape(cluster.url) + r" \(Kubernetes v1\.20\.\d+\)"))
    assert page.is_hidden("#signin")
    expect(page.locator("#namespaces button[data-namespace='%s']" % home_ns)).to_be_visible()
    expect(page.locator("#namespaces")).to_contain_text("kube-system")
    # First all namespaces' pods; the token stays in this tab: never in the URL (whose fragment
    # holds the namespace chosen), never a cookie.
    expect(page.locator("#pods-title")).to_have_text("Pods in all namespaces")
    expect(page.locator("#pods tbody tr").first).to_be_visible()
    assert page.url == gw.url + "/"
    assert page.evaluate("Object.values(sessionStorage)") == [admin_token]
    assert page.context.cookies() == []

    page.click("#namespaces button[data-namespace='%s']" % home_ns)
    expect(page.locator("#pods-title")).to_have_text("Pods in " + home_ns)
    assert page.url == "%s/#%s" % (gw.url, home_ns)
    expect(pod_row(page, "hello")).to_be_visible()
    name, namespace, status, restarts, cpu, memory, _ = wait_for_metrics(page, "hello")
    assert (name, namespace, status, restarts) == ("hello", home_ns, "Running", "0")
    assert CPU.match(cpu) and MEMORY.match(memory), (cpu, memory)

    pod_row(page, "hello").locator("button", has_text="Log").click()
    expect(page.locator("#log-title")).to_have_text("Log of %s/hello (container app)" % home_ns)
    expect(page.locator("#log-lines")).to_contain_text("line 3")
    assert page.text_content("#log-lines").splitlines()[:2] == [
        "starting container app (image busybox, instance 0)", "ready"]
    page.screenshot(path=SCREENSHOT, full_page=True)
    assert os.path.getsize(SCREENSHOT) > 10_000

    # The wrong token's 401 is the one error the console saw.
    assert [e for e in errors if "401" not in e] == [], errors

    # A reload keeps the tab signed in; signing out forgets the token.
    page.reload()
    expect(page.locator("#pods-title")).to_have_text("Pods in " + home_ns)
    page.click("#signout")
    expect(page.locator("#signin")).to_be_visible()
    assert page.evaluate("sessionStorage.length") == 0


def test_cluster_data_with_markup_is_shown_as_text(page, home_gateway, home_ns, markup_pod,
                                                   cluster, admin_token):
    page.goto(home_gateway.url + "/")
    sign_in(page, admin_token)
    page.click("#namespaces button[data-namespace='%s']" % home_ns)
    pod_row(page, markup_pod).locator("button", has_text="Log").click()
    expect(page.locator("#log-lines")).to_contain_text(MARKUP)
    assert page.locator("img").count() == 0
    assert page.evaluate("window.injected") is None
    assert "<img" not in page.inner_html("#log-lines").replace("&lt;img", "")


@pytest.fixture
def team_pod(cluster):
    """Pod ``home-editor`` in the editor's namespace (the editor may not list namespaces)."""
    namespace = cluster.editor_namespace
    run_pod(cluster, namespace, "home-editor")
    yield namespace, "home-editor"
    cluster.request("DELETE", "/api/v1/namespaces/%s/pods/home-editor" % namespace,
                    params={"gracePeriodSeconds": 0})


def test_tokens_of_lesser_rights(page, home_gateway, team_pod, editor_token, norights_token):
    """The editor (team-a only) sees the namespaces it may read and their pods, and may name
    another namespace; a token with no rights is told what it may not do."""
    namespace, pod = team_pod
    page.goto(home_gateway.url + "/")
    sign_in(page, editor_token)
    expect(page.locator("#pods-title")).to_have_text("Pods in all namespaces")
    assert page.locator("#namespaces button").all_text_contents() == ["All namespaces",
                                                                      namespace]
    expect(pod_row(page, pod)).to_be_visible()  # in all the namespaces it may read
    page.click("#namespaces button[data-namespace='%s']" % namespace)
    expect(page.locator("#pods-title")).to_have_text("Pods in " + namespace)
    pod_row(page, pod).locator("button", has_text="Log").click()
    expect(page.locator("#log-lines")).to_contain_text("ready")
    # A namespace named by hand, which this token may not read: the API server's 403, said.
    page.fill("#namespace-name", "kube-system")
    page.click("#namespace-form button")
    expect(page.locator("#pods-title")).to_have_text("Pods in kube-system")
    expect(page.locator("#namespaces button[aria-current=true]")).to_have_text("kube-system")
    expect(page.locator("#overview-message")).to_contain_text("Listing the pods failed (403)")
    assert page.url == home_gateway.url + "/#kube-system"

    page.click("#signout")
    page.goto(home_gateway.url + "/")
    sign_in(page, norights_token)
    expect(page.locator("#namespaces-note")).to_contain_text(
        "This token may not list namespaces")
    expect(page.locator("#overview-message")).to_contain_text("Listing the pods failed (403)")


def test_the_lists_update_by_themselves(page, home_gateway, home_ns, cluster, admin_token):
    """No timer: the page is told over its WebSocket (api/v1/live) that a list changed, and
    fetches it again; a new pod and a new namespace appear without a click."""
    frames = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f)))
    page.goto("%s/#%s" % (home_gateway.url, home_ns))
    sign_in(page, admin_token)
    expect(pod_row(page, "hello")).to_be_visible()
    try:
        wait_for(lambda: sum('"type":"subscribed"' in f for f in frames) >= 2,
                 what="the page's two subscriptions")
    except TimeoutError:
        raise AssertionError("the page's two subscriptions were not answered; it heard %r"
                             % frames[-10:]) from None
    notices = len([f for f in frames if '"type":"changed"' in f])

    status, _ = cluster.request("POST", "/api/v1/namespaces/%s/pods" % home_ns, {
        "metadata": {"name": "arrived"},
        "spec": {"containers": [{"name": "app", "image": "busybox"}],
                 "automountServiceAccountToken": False}})
    assert status == 201
    expect(pod_row(page, "arrived")).to_be_visible()
    name = cluster.new_namespace("arrived")
    try:
        expect(page.locator("#namespaces button[data-namespace='%s']" % name)).to_be_visible()
    finally:
        cluster.request("DELETE", "/api/v1/namespaces/" + name)
    assert len([f for f in frames if '"type":"changed"' in f]) > notices
    expect(page.locator("#pods-title")).to_have_text("Pods in " + home_ns)   # still chosen
    assert page.is_hidden("#stale")
    page.click("#signout")
    expect(page.locator("#signin")).to_be_visible()


def test_the_home_page_says_when_the_cluster_does_not_answer(page, cluster, home_ns,
                                                             admin_token):
    """The API server refused (a fault proxy in front of it): the pods stay as last seen, and
    the page says since when the cluster has not answered; then it answers again."""
    with FaultProxy.in_front_of(cluster.url) as proxy:
        gw = Gateway.start(cluster, *FAULT_FLAGS, apiserver=proxy.url)
        try:
            gw.wait_cache_synced()
            page.goto("%s/#%s" % (gw.url, home_ns))
            sign_in(page, admin_token)
            expect(pod_row(page, "hello")).to_be_visible()
            assert page.is_hidden("#stale")
            proxy.refuse()
            expect(page.locator("#stale")).to_have_text(re.compile(
                r"^The cluster has not answered since .+; this is what was last seen\.$"),
                timeout=30_000)
            page.click("#refresh")   # the lists are still answered, from what was seen
            expect(pod_row(page, "hello")).to_be_visible()
            assert page.is_hidden("#overview-message")
            proxy.passing()
            expect(page.locator("#stale")).to_be_hidden(timeout=30_000)
        finally:
            gw.stop()


def search(page, query):
    page.fill("#search-query", query)
    page.click("#search-form button[type=submit]")


def test_the_search_box_finds_every_kind_and_opens_what_it_found(page, home_gateway, home_ns,
                                                                 admin_token):
    """Results grouped by kind, each name opening its object: a pod's log, another object's
    detail; a malformed query is the gateway's 400, said."""
    page.goto(home_gateway.url + "/")
    sign_in(page, admin_token)
    expect(page.locator("#pods tbody tr").first).to_be_visible()
    search(page, "hello ns:" + home_ns)
    group = page.locator("#search-results .search-group[data-kind=pod]")
    expect(group.locator("h3")).to_have_text("pod (1)")
    row = group.locator("tr[data-name=hello]")
    assert row.locator("td").all_text_contents() == ["hello", home_ns, "Running"]
    row.locator("button").click()
    expect(page.locator("#log-title")).to_have_text("Log of %s/hello (container app)" % home_ns)
    expect(page.locator("#log-lines")).to_contain_text("line 3")

    search(page, "kind:configmap|serviceaccount ns:" + home_ns)
    configs = page.locator("#search-results .search-group[data-kind=configmap]")
    expect(configs.locator("tr[data-name='kube-root-ca.crt']")).to_be_visible()
    expect(page.locator("#search-results .search-group[data-kind=serviceaccount]")
           .locator("tr[data-name=default]")).to_be_visible()
    assert page.locator("#search-results .search-group").count() == 2
    configs.locator("tr[data-name='kube-root-ca.crt'] button").click()
    expect(page.locator("#object-title")).to_have_text("configmap %s/kube-root-ca.crt"
                                                      % home_ns)
    expect(page.locator("#object-body")).to_contain_text('"ca.crt"')

    search(page, "hello foo:bar")
    expect(page.locator("#search-message")).to_contain_text(
        "The search failed (400): search query: term 'foo:bar': unknown prefix 'foo:'")
    assert page.locator("#search-results .search-group").count() == 0
    search(page, "no-such-thing-anywhere")
    expect(page.locator("#search-note")).to_have_text("Nothing found.")


def test_the_search_box_of_the_editor(page, home_gateway, team_pod, editor_token):
    namespace, pod = team_pod
    page.goto(home_gateway.url + "/")
    sign_in(page, editor_token)
    expect(pod_row(page, pod)).to_be_visible()
    search(page, pod)
    group = page.locator("#search-results .search-group[data-kind=pod]")
    expect(group.locator("tr[data-name='%s']" % pod)).to_be_visible()
    assert page.locator("#search-results tr").count() == 1
    expect(page.locator("#search-skipped-title")).to_contain_text("kinds not searched")
    expect(page.locator("#search-skipped-list")).to_contain_text(
        "node: forbidden: you may not list nodes")


def test_the_activity_view(page, home_gateway, home_ns, cluster, admin_token, norights_token):
    """Changes made through the gateway, newest first, in the namespace chosen; paged; a token
    without rights sees none of them."""
    gw = home_gateway
    ids = []
    for i in range(22):   # more than a page of 20
        name = "act-%02d" % i
        reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/%s" % (home_ns, name),
                           token=admin_token, body={"apiVersion": "v1", "kind": "ConfigMap",
                                                    "metadata": {"name": name}})
        assert reply.status == 204, reply
        ids.append(reply.headers["X-Request-Id"])
    refused = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/no" % home_ns,
                         token=norights_token, body={"apiVersion": "v1", "kind": "ConfigMap",
                                                     "metadata": {"name": "no"}})
    assert refused.status == 403
    page.goto(gw.url + "/#" + home_ns)
    sign_in(page, admin_token)
    expect(page.locator("#activity-title")).to_have_text("Activity in " + home_ns)
    newest = page.locator("#activity-table tbody tr").first
    expect(newest).to_have_attribute("data-request", refused.headers["X-Request-Id"])
    texts = newest.locator("td").all_text_contents()
    assert texts[1:] == ["nobody", "PUT raw-namespaced", "configmap %s/no" % home_ns,
                         "403 Forbidden"], texts
    second = page.locator("#activity-table tbody tr").nth(1).locator("td").all_text_contents()
    assert second[1:] == ["unknown", "PUT raw-namespaced", "configmap %s/act-21" % home_ns,
                          "204"], second
    assert page.locator("#activity-table tbody tr").nth(1).locator("td.unverified").count() == 1
    expect(page.locator("#activity-page")).to_have_text("page 1 of 2")
    page.click("#activity-older")
    expect(page.locator("#activity-page")).to_have_text("page 2 of 2")
    expect(page.locator("#activity-table tbody tr")).to_have_count(3)
    expect(page.locator("#activity-table tbody tr").last).to_have_attribute(
        "data-request", ids[0])
    assert page.is_disabled("#activity-older") and not page.is_disabled("#activity-newer")
    page.screenshot(path="/tmp/dashboard-home-activity.png", full_page=True)
    page.click("#signout")
    # A token without rights sees none of it.
    sign_in(page, norights_token)
    expect(page.locator("#activity-note")).to_have_text(
        "No changes here that this token may see.")
    expect(page.locator("#activity-table tbody tr")).to_have_count(0)
