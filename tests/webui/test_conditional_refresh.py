"""The upstream web UI's auto-refresh against conditional lists (issue #40), in headless
chromium: a page that refreshes a pod list on a timer with plain GETs through the browser's own
cache (tests/webui/page/refresh.js) gets 304s while nothing changes (the browser revalidates
its kept copy with If-None-Match, the gateway answers without building the page), and shows a
change at the first refresh after the gateway's cache has it."""

import time

from tests.logs.kube import run_pod
from tests.support.waiting import wait_for

INTERVAL_MS = 1000   # the test's refresh interval (the web UI's default is 5 s)


def answers(gateway, code):
    """How many pod lists the gateway answered the browser with ``code`` (its /metrics: the
    browser hands the page its kept copy, so the page itself sees a 200 either way)."""
    total = 0.0
    for line in gateway.get("/metrics").data.decode().splitlines():
        if line.startswith("apiserver_request_count{") and 'resource="pod"' in line and \
                'code="%d"' % code in line and "HeadlessChrome" in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def settled(gw, path, token, quiet=1.5, timeout=30):
    """Waits until the list has not changed for ``quiet`` seconds (the pod's start-up events
    and status are in): its tag then holds."""
    deadline = time.monotonic() + timeout
    tag = gw.get(path, token=token).headers["ETag"]
    while True:
        time.sleep(quiet)
        reply = gw.get(path, token=token, headers={"If-None-Match": tag})
        if reply.status == 304:
            return
        assert time.monotonic() < deadline, "the list kept changing: %r" % reply
        tag = reply.headers["ETag"]


def test_timer_refreshes_are_304s_until_the_list_changes(page, ui_gateway, cluster, namespace,
                                                         admin_token):
    gw = ui_gateway
    path = "/api/v1/pod/" + namespace
    run_pod(cluster, namespace, "first")
    settled(gw, path, admin_token)
    page.goto(gw.url + "/refresh.html")
    page.evaluate("([ns, token, ms]) => refresher.start(ns, token, ms)",
                  [namespace, admin_token, INTERVAL_MS])
    wait_for(lambda: page.evaluate("refresher.loads") >= 5, timeout=30,
             what="five refreshes")
    assert page.evaluate("refresher.errors") == []
    # The first refresh is the page; the next ones the browser's kept copy, revalidated.
    loads = page.evaluate("refresher.loads")
    assert answers(gw, 200) == 1 and answers(gw, 304) >= loads - 1, loads
    assert page.evaluate("refresher.shown").count(["first"]) == page.evaluate("refresher.loads")

    # A change: shown at the first refresh made after the gateway's cache has it (the one
    # under way may have been answered just before).
    cluster.request("POST", "/api/v1/namespaces/%s/pods" % namespace, {
        "metadata": {"name": "second"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    wait_for(lambda: "second" in [p["objectMeta"]["name"] for p in gw.get(
        path, token=admin_token).json()["pods"]], what="the new pod in the gateway's list")
    cached = page.evaluate("refresher.loads")
    wait_for(lambda: any("second" in names for names in page.evaluate("refresher.shown")),
             timeout=30, what="the page to show the new pod")
    shown = page.evaluate("refresher.shown")
    first_with = next(i for i, names in enumerate(shown) if "second" in names) + 1
    assert first_with <= cached + 2, (cached, shown)
    page.locator("#pods tbody tr", has_text="second").wait_for()
    assert answers(gw, 200) >= 2
    page.evaluate("refresher.stop()")
