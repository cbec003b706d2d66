"""Fixtures of the web UI tests: a gateway serving our own browser test page (``web_root``,
tests/support/browser.py) with --web-ui-compat, the page from another origin, a shell pod."""

import functools
import http.server
import threading

import pytest

from tests.support.gateway import Gateway
from tests.terminal.conftest import create_pods


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
