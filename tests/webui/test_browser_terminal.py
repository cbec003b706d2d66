"""The terminal in a real browser: our test page (tests/webui/page) in headless chromium loads
the real sockjs-client from the gateway's --web-root, asks for a shell with a token, binds it,
types, resizes and exits, over websockets and over a streaming fallback; a page of another
origin can neither get a session nor bind one."""

import re
import secrets
import time

import pytest

from tests.terminal.conftest import CONTAINER

EXITED = {"code": 1, "reason": "Process exited"}
NOT_OPENED = "term.closed !== null || term.transport !== null"


def shell_path(namespace, pod):
    return f"/api/v1/pod/{namespace}/{pod}/shell/{CONTAINER}"


def wait_output(page, text, timeout=15_000):
    page.wait_for_function("text => term.output.includes(text) || term.closed !== null",
                           arg=text, timeout=timeout)
    output = page.evaluate("term.output")
    assert text in output, (page.evaluate("term.closed"), output[-500:])


# sockjs-client options: every transport (the web UI's), and websockets turned off.
TRANSPORTS = {
    "websocket": {},
    "xhr-streaming": {"transports": ["xhr-streaming", "eventsource", "xhr-polling"]},
}


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_shell_in_the_browser(page, ui_gateway, admin_token, shell_pod, transport):
    namespace, pod = shell_pod
    page.goto(ui_gateway.url + "/")
    session_id = page.evaluate("([path, token]) => term.session(path, token)",
                               [shell_path(namespace, pod), admin_token])
    assert re.fullmatch(r"[A-Za-z0-9_-]{40,4000}", session_id), session_id  # a sealed id
    opened = page.evaluate("([id, options]) => term.open(id, options, '', 31, 97)",
                           [session_id, TRANSPORTS[transport]])
    assert opened == transport, page.evaluate("term.closed")
    page.evaluate("term.stdin('echo out-$((6*7))\\r')")
    wait_output(page, "out-42")
    # The size sent right after the bind, then a resize, as the process sees them.
    page.evaluate("term.stdin('stty size\\r')")
    wait_output(page, "31 97")
    page.evaluate("term.resize(50, 132)")
    page.evaluate("term.stdin('stty size\\r')")
    wait_output(page, "50 132")
    page.evaluate("term.stdin('exit\\r')")
    page.wait_for_function("term.closed !== null")
    assert page.evaluate("term.closed") == EXITED
    assert "out-42" in page.text_content("#out")


def test_the_shell_request_needs_the_token(page, ui_gateway, shell_pod):
    namespace, pod = shell_pod
    page.goto(ui_gateway.url + "/")
    error = page.evaluate("""path => fetch(path).then(
        async r => r.status + ' ' + r.headers.get('content-type') + ' ' + await r.text())""",
                          shell_path(namespace, pod))
    # With --web-ui-compat a 401 is the text the upstream web UI returns to its login page on.
    assert error == "401 text/plain; charset=utf-8 MSG_LOGIN_UNAUTHORIZED_ERROR"


def test_another_origin_cannot_open_a_session(page, ui_gateway, other_origin, admin_token,
                                              shell_pod):
    namespace, pod = shell_pod
    page.goto(other_origin + "/")
    # Even holding a valid token, a page of another origin cannot ask for a session: sending
    # the Authorization header needs a CORS preflight, which the gateway never grants.
    refused = page.evaluate("""([url, token]) => term.session(url, token).then(
        id => 'got ' + id, e => e.name + ': ' + e.message)""",
                            [ui_gateway.url + shell_path(namespace, pod), admin_token])
    assert refused.startswith("TypeError: "), refused
    preflight = ui_gateway.request("OPTIONS", shell_path(namespace, pod), headers={
        "Origin": other_origin, "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization"})
    assert not [h for h in preflight.headers if h.lower().startswith("access-control-")]

    # Nor can it bind a session id it learnt: the SockJS endpoint refuses other origins on
    # every transport, so the connection never opens.
    session_id = ui_gateway.get(shell_path(namespace, pod), admin_token).json()["id"]
    started = time.monotonic()
    opened = page.evaluate("([id, base]) => term.open(id, {}, base)",
                           [session_id, ui_gateway.url + "/"])
    assert opened is None, opened
    assert page.evaluate("term.closed")["code"] != 1
    # WebSockets know no CORS: a raw one straight to the transport URL is refused by the
    # gateway itself (the handshake fails, so the bind frame is never sent).
    websocket = ui_gateway.url.replace("http:", "ws:") + "/api/sockjs/000/%s/websocket" % (
        secrets.token_hex(8))
    raw = page.evaluate("""([url, id]) => new Promise(resolve => {
        const ws = new WebSocket(url);
        ws.onopen = () => {
          ws.send(JSON.stringify([JSON.stringify({Op: 'bind', SessionID: id})]));
          resolve('opened');
        };
        ws.onclose = (e) => resolve('closed ' + e.code);
      })""", [websocket, session_id])
    assert raw == "closed 1006", raw
    assert time.monotonic() - started < 8, "the refusals should be quick"

    # The session is still there, unbound: the gateway's own page binds it and gets a shell.
    page.goto(ui_gateway.url + "/")
    assert page.evaluate("id => term.open(id, {})", session_id) == "websocket"
    page.evaluate("term.stdin('echo mine-$((5*5))\\r')")
    wait_output(page, "mine-25")
    page.evaluate("term.stdin('exit\\r')")
    page.wait_for_function("term.closed !== null")
    assert page.evaluate("term.closed") == EXITED
