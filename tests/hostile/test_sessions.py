"""Attack: typing into another user's terminal through its SockJS fallback session.

The victim runs a real shell over xhr-polling, as a browser does: it opens the SockJS session
(and gets the owner cookie), binds its shell id with xhr_send and polls. The attacker knows
the SockJS session id (it travels in every URL of the session) but has neither the victim's
cookie nor a token: its xhr_send and its polls are refused (403), its keystrokes never reach
the shell, while the victim's keep working and the gateway stays responsive.
"""

import json
import secrets
import time

import pytest
import urllib3

from tests.support.gateway import Gateway
from tests.support.probe import Probe
from tests.terminal.conftest import CONTAINER, create_pods


@pytest.fixture(scope="module")
def shell_namespace(cluster):
    namespace = cluster.new_namespace("hostile-sess")
    create_pods(cluster, namespace, {"web": "nginx:1.19"})
    yield namespace
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


@pytest.fixture(scope="module")
def gw(cluster):
    gateway = Gateway.start(cluster, "--watch-cache=false", "-v", "debug")  # every line logged
    yield gateway
    gateway.stop()


class XhrClient:
    """One SockJS xhr-polling session, with or without the cookies it was given."""

    def __init__(self, gw, base, cookie=None):
        self.http = urllib3.PoolManager(retries=False,
                                        timeout=urllib3.Timeout(connect=5, read=10))
        self.url = gw.url + base
        self.cookie = cookie

    def _headers(self):
        return {"Cookie": self.cookie} if self.cookie else {}

    def open(self):
        reply = self.http.request("POST", self.url + "xhr")
        assert reply.status == 200 and reply.data == b"o\n", reply.data
        self.cookie = reply.headers["Set-Cookie"].split(";")[0]

    def send(self, frame):
        body = json.dumps([json.dumps(frame)]).encode()
        return self.http.request("POST", self.url + "xhr_send", body=body,
                                 headers=self._headers()).status

    def poll(self):
        reply = self.http.request("POST", self.url + "xhr", headers=self._headers())
        return reply.status, reply.data.decode("utf-8", "replace")


def test_another_clients_keystrokes_are_refused(gw, admin_token, shell_namespace):
    shell = gw.get(f"/api/v1/pod/{shell_namespace}/web/shell/{CONTAINER}", token=admin_token)
    assert shell.status == 200, shell
    shell_id = shell.json()["id"]
    base = "/api/sockjs/%03d/%s/" % (secrets.randbelow(1000), secrets.token_hex(8))
    victim = XhrClient(gw, base)
    victim.open()
    assert victim.send({"Op": "bind", "SessionID": shell_id}) == 204
    attacker = XhrClient(gw, base)  # the session's URL, no cookie, no token
    forger = XhrClient(gw, base, cookie=victim.cookie.split("=")[0] + "=AAAA.AAAA")
    output = ""
    with Probe(gw, admin_token) as probe:
        for intruder in (attacker, forger):
            assert intruder.send({"Op": "stdin", "Data": "echo HIJACK-$((20+22))\r"}) == 403
            assert intruder.poll()[0] == 403  # nor may it read the victim's screen
        assert victim.send({"Op": "stdin", "Data": "echo mine-$((6*7))\r"}) == 204
        deadline = time.monotonic() + 15
        while "mine-42" not in output and time.monotonic() < deadline:
            status, data = victim.poll()
            assert status == 200 and not data.startswith("c"), data
            output += data
    assert "mine-42" in output
    assert "HIJACK-42" not in output
    probe.assert_responsive(max_seconds=1.0)
    assert victim.send({"Op": "stdin", "Data": "exit\r"}) == 204
    log = gw.log(whole=True)
    assert "this terminal connection belongs to another client" in log
    server, session = base.split("/")[3:5]
    assert session not in log and shell_id not in log  # ids only as fingerprints
    assert "/api/sockjs/%s/fp-" % server in log
