"""Calls to the provider (auth/oidc/http.py) against a local HTTPS server with a CA the test
makes: the CA is used, answers are bounded in size, and a silent server meets the deadline."""

import asyncio
import time

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web

from dashboard_api.auth.oidc.http import Http, ProviderError
from tests.cluster import pki as pki_mod


class Ok(tornado.web.RequestHandler):
    def get(self):
        self.write({"issuer": "x"})

    def post(self):
        self.write({"form": self.get_body_argument("grant_type"),
                    "auth": self.request.headers.get("Authorization", "")})


class Big(tornado.web.RequestHandler):
    def get(self):
        self.write(b'{"a": "' + b"x" * (300 * 1024) + b'"}')


class Slow(tornado.web.RequestHandler):
    async def get(self):
        await asyncio.sleep(3)
        self.write({})


async def serve(pki):
    app = tornado.web.Application([("/ok", Ok), ("/big", Big), ("/slow", Slow)])
    server = tornado.httpserver.HTTPServer(app, ssl_options={
        "certfile": pki.apiserver_cert, "keyfile": pki.apiserver_key})
    [sock] = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server.add_sockets([sock])
    return server, "https://127.0.0.1:%d" % sock.getsockname()[1]


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return pki_mod.create(str(tmp_path_factory.mktemp("oidc-pki")))


def test_fetch_with_the_ca_bounded_and_with_a_deadline(pki):
    async def main():
        server, base = await serve(pki)
        http = Http(pki.ca_cert, timeout=0.5)
        try:
            assert await http.fetch(base + "/ok") == (200, {"issuer": "x"})
            status, doc = await http.fetch(base + "/ok", form={"grant_type": "x"},
                                           basic=("a", "b"))
            assert doc == {"form": "x", "auth": "Basic YTpi"}
            with pytest.raises(ProviderError, match="longer than 262144 bytes"):
                await http.fetch(base + "/big")
            started = time.monotonic()
            with pytest.raises(ProviderError, match="no answer within 0.5s"):
                await http.fetch(base + "/slow")
            assert time.monotonic() - started < 2
            # Without the test CA the provider's certificate is not trusted.
            with pytest.raises(ProviderError, match="unreachable"):
                await Http(None, timeout=2).fetch(base + "/ok")
        finally:
            http.close()
            server.stop()
    asyncio.run(main())
