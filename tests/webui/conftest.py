"""Fixtures of the web UI tests: a gateway serving a web root with --web-ui-compat, our own
browser test page, and headless Debian chromium driven by playwright."""

import functools
import http.server
import os
import shutil
import threading

import pytest

from tests.support.fixtures import (  # noqa: F401
    clusters_home, clusters_kubeconfig, clusters_ui, gateway)
from tests.support.gateway import Gateway
from tests.terminal.conftest import create_pods
from tests.terminal.jsclient import JS_DIR

PAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page")
SOCKJS = os.path.join(JS_DIR, "node_modules", "sockjs-client", "dist", "sockjs.min.js")


@pytest.fixture(scope="module")
def web_root(tmp_path_factory):
    """Our test page next to the real sockjs-client browser bundle (installed by bootstrap)."""
    assert os.path.isfile(SOCKJS), "run bin/bootstrap: it installs sockjs-client"
    root = tmp_path_factory.mktemp("webroot")
    for name in os.listdir(PAGE_DIR):
        shutil.copy(os.path.join(PAGE_DIR, name), root / name)
    shutil.copy(SOCKJS, root / "sockjs.min.js")
    return str(root)


@pytest.fixture(scope="module")
def ui_gateway(cluster, web_root):
    """A gateway serving the web root with the upstream web UI's shapes, as bin/dashboard
    runs it with --web-root."""
    gw = Gateway.start(cluster, "--web-root", web_root, "--web-ui-compat")
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def other_origin(web_root):
    """The same page from another origin: a plain file server on another port."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=web_root)
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    yield "http://127.0.0.1:%d" % server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def shell_pod(cluster):
    """(namespace, pod) of a running pod whose image has bash."""
    namespace = cluster.new_namespace("webterm")
    create_pods(cluster, namespace, {"web": "nginx:1.19"})
    yield namespace, "web"
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


def chromium_path():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    assert path, "Debian's chromium is needed for the browser tests (bin/bootstrap installs it)"
    return path


@pytest.fixture(scope="module")
def browser():
    """One headless chromium for the module (Debian's, never a downloaded one)."""
    os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
    from playwright.sync_api import sync_playwright
    args = ["--no-sandbox"] if os.geteuid() == 0 else []  # chromium refuses root otherwise
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=args)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    tab = context.new_page()
    tab.set_default_timeout(20_000)
    yield tab
    context.close()

