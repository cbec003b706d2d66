"""Browser fixtures shared by the suites that drive a page (tests/webui, tests/oidc,
tests/metrics), registered once (tests/conftest.py's ``pytest_plugins``): headless Debian
chromium driven by playwright, and our own test page served as a web root."""

import os
import shutil

import pytest

from tests.terminal.jsclient import JS_DIR

PAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "webui",
                        "page")
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
