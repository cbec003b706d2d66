"""One connection's messages (live/channel.py): the token first, bounded ids and counts, a rate
of messages, and clear closes."""

import asyncio
import json

from dashboard_api.live.channel import (BAD_MESSAGE, FORBIDDEN, MAX_BURST, MAX_SUBSCRIPTIONS,
                                        TOO_MANY, TOO_SLOW, UNAUTHORIZED, Channel)
from dashboard_api.serving.errors import ApiError


class Hub:
    def __init__(self):
        self.joined, self.left, self.subscribed = [], [], []

    def join(self, channel):
        self.joined.append(channel)

    def leave(self, channel):
        self.left.append(channel)

    async def subscribe(self, channel, sid, path):
        self.subscribed.append((sid, path))
        channel.subscriptions[sid] = path

    def unsubscribe(self, channel, sid):
        channel.subscriptions.pop(sid, None)


def channel(now=None, accept=True):
    now = now or [0.0]
    hub, sent, closes = Hub(), [], []
    async def handle_for(token):
        if token == "refused":
            raise ApiError(403, "Impersonate-* headers are refused on cluster c")
        return ("handle", token)
    ch = Channel(hub, lambda m: accept and (sent.append(m) or True),
                 lambda code, reason: closes.append((code, reason)), handle_for,
                 clock=lambda: now[0])
    return ch, hub, sent, closes


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_the_token_comes_first():
    ch, hub, _, closes = channel()
    run(ch.receive(json.dumps({"type": "subscribe", "id": "x", "path": "api/v1/pod"})))
    assert closes == [(UNAUTHORIZED, "the first message must be {type: auth, token}")]
    assert hub.left == [ch] and hub.joined == []
    ch, hub, _, closes = channel()
    run(ch.receive(json.dumps({"type": "auth", "token": "tok\nen"})))   # not a header value
    assert closes[0][0] == UNAUTHORIZED
    ch, hub, _, closes = channel()
    run(ch.receive(json.dumps({"type": "auth", "token": "abc"})))
    assert hub.joined == [ch] and ch.handle == ("handle", "abc")
    run(ch.receive(json.dumps({"type": "auth", "token": "abc"})))
    assert closes == [(BAD_MESSAGE, "already signed in on this connection")]
    ch, hub, _, closes = channel()   # credentials the cluster refuses as sent
    run(ch.receive(json.dumps({"type": "auth", "token": "refused"})))
    assert closes == [(FORBIDDEN, "Impersonate-* headers are refused on cluster c")]
    assert hub.joined == []


def test_ids_and_subscriptions_are_bounded():
    ch, hub, sent, closes = channel()
    run(ch.receive(json.dumps({"type": "auth", "token": "abc"})))
    for i in range(MAX_SUBSCRIPTIONS):
        run(ch.receive(json.dumps({"type": "subscribe", "id": "s%d" % i, "path": "p"})))
    run(ch.receive(json.dumps({"type": "subscribe", "id": "s0", "path": "q"})))  # a replace
    run(ch.receive(json.dumps({"type": "subscribe", "id": "one more", "path": "p"})))
    assert sent[-1]["type"] == "refused" and sent[-1]["code"] == 429
    assert len(hub.subscribed) == MAX_SUBSCRIPTIONS + 1 and not closes
    run(ch.receive(json.dumps({"type": "subscribe", "id": "x" * 65, "path": "p"})))
    assert closes[0][0] == BAD_MESSAGE


def test_a_flood_is_closed_and_a_full_queue_is_too_slow():
    now = [0.0]
    ch, _, _, closes = channel(now)
    run(ch.receive(json.dumps({"type": "auth", "token": "abc"})))
    for _ in range(MAX_BURST - 1):   # the auth message was one
        run(ch.receive(json.dumps({"type": "unsubscribe", "id": "x"})))
    assert not closes
    now[0] += 1.0   # five more a second
    for _ in range(5):
        run(ch.receive(json.dumps({"type": "unsubscribe", "id": "x"})))
    assert not closes
    run(ch.receive(json.dumps({"type": "unsubscribe", "id": "x"})))
    assert closes[0][0] == TOO_MANY

    ch, _, _, closes = channel(accept=False)
    ch.send({"type": "changed", "id": "x"})
    assert closes[0][0] == TOO_SLOW and ch.closed
