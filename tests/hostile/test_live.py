"""The notices' WebSocket (/api/v1/live) under attack: a page of another site cannot open it,
a GET that does not upgrade is a JSON 400 (another method a 405 naming GET), an oversized
message, a first message that is not the token, a flood of messages and too many
subscriptions each end in a clear refusal, and meanwhile the gateway answers
(tests/support/probe.py)."""

import asyncio

import pytest
import tornado.httpclient
import tornado.websocket

from tests.live.client import Live
from tests.support.probe import Probe


@pytest.mark.gen_test(timeout=60)
async def test_a_page_of_another_site_cannot_open_it(gateway):
    with pytest.raises(tornado.httpclient.HTTPClientError) as refused:
        await Live.connect(gateway, origin="http://evil.example")
    assert refused.value.code == 403
    reply = gateway.get("/api/v1/live")
    assert reply.status == 400 and reply.json()["reason"] == "BadRequest", reply
    assert reply.headers["Content-Type"].startswith("application/json")
    other = gateway.request("POST", "/api/v1/live", body={"type": "auth"})
    assert other.status == 405 and other.headers["Allow"] == "GET", other
    assert other.json()["reason"] == "MethodNotAllowed"


@pytest.mark.gen_test(timeout=120)
async def test_every_bound_ends_in_a_clear_close_and_the_gateway_answers(gateway, namespace,
                                                                        admin_token):
    with Probe(gateway, admin_token) as probe:
        # The token first, or nothing.
        live = await Live.connect(gateway)
        await live.send({"type": "subscribe", "id": "x", "path": "api/v1/pod"})
        assert await live.closed() == (4401, "the first message must be {type: auth, token}")

        # A message larger than the bound: closed by the WebSocket itself (1009).
        live = await Live.connect(gateway, admin_token)
        await live.send("x" * 70_000)
        code, _ = await live.closed()
        assert code == 1009, code

        # Junk after sign-in.
        live = await Live.connect(gateway, admin_token)
        await live.send("{not json")
        code, reason = await live.closed()
        assert code == 4400 and "unknown message" in reason, (code, reason)

        # More subscriptions than a connection may hold: that one is refused.
        live = await Live.connect(gateway, admin_token)
        for i in range(16):
            answer = await live.subscribe("s%d" % i, "api/v1/configmap/" + namespace)
            assert answer["type"] == "subscribed", answer
        answer = await live.subscribe("s16", "api/v1/configmap/" + namespace)
        assert (answer["type"], answer["code"]) == ("refused", 429), answer
        live.close()

        # A flood of messages: closed once past the burst.
        live = await Live.connect(gateway, admin_token)
        for i in range(200):
            try:
                await live.send({"type": "unsubscribe", "id": "s%d" % i})
            except tornado.websocket.WebSocketClosedError:
                break
        code, reason = await live.closed()
        assert code == 4429 and "too many messages" in reason, (code, reason)

        # Many connections at once, each signed in and subscribed, then gone.
        many = await asyncio.gather(*(Live.connect(gateway, admin_token) for _ in range(50)))
        for live in many:
            await live.send({"type": "subscribe", "id": "p",
                             "path": "api/v1/pod/" + namespace})
        for live in many:
            assert (await live.next())["type"] == "subscribed"
            live.close()
    probe.assert_responsive(max_seconds=1.0)
