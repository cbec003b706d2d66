"""A client of the notices' WebSocket (/api/v1/live) for the tests: Tornado's WebSocket
client, each wait bounded."""

import asyncio
import json

import tornado.httpclient
import tornado.websocket

QUIET = 1.2   # seconds a test listens to say that nothing came (a tick is 0.25 s)


class Live:
    """One connection; ``next()`` is the next message (a dict), ``closed()`` the close."""

    def __init__(self, conn):
        self.conn = conn

    @classmethod
    async def connect(cls, gateway, token=None, origin=None, path="/api/v1/live"):
        url = gateway.url.replace("http", "ws", 1) + path
        headers = {"Origin": origin} if origin else {}
        conn = await tornado.websocket.websocket_connect(
            tornado.httpclient.HTTPRequest(url, headers=headers, connect_timeout=10,
                                           request_timeout=10))
        live = cls(conn)
        if token is not None:
            await live.send({"type": "auth", "token": token})
            ready = await live.next()
            assert ready["type"] == "ready", ready
            live.ready = ready
        return live

    async def send(self, message):
        await self.conn.write_message(message if isinstance(message, str)
                                      else json.dumps(message))

    async def next(self, timeout=15.0):
        text = await asyncio.wait_for(self.conn.read_message(), timeout)
        assert text is not None, ("closed", self.conn.close_code, self.conn.close_reason)
        return json.loads(text)

    async def nothing(self, seconds=QUIET):
        """Asserts that no message comes for ``seconds``."""
        try:
            message = await asyncio.wait_for(self.conn.read_message(), seconds)
        except asyncio.TimeoutError:
            return
        raise AssertionError("expected nothing, got %r" % (message,))

    async def subscribe(self, sid, path):
        await self.send({"type": "subscribe", "id": sid, "path": path})
        return await self.next()

    async def closed(self, timeout=15.0):
        """(code, reason) once the gateway closed the connection (messages before are
        skipped)."""
        async def drained():
            while await self.conn.read_message() is not None:
                pass
        await asyncio.wait_for(drained(), timeout)
        return self.conn.close_code, self.conn.close_reason

    def close(self):
        self.conn.close()
