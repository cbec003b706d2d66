"""The notices' loop (live/hub.py) over a stand-in cluster: a notice only when the validator
moved, at most one a second per subscription (the last change told at its end), checks only
when the versions moved or RECHECK passed, a right taken away or a token refused ending the
subscription or the connection, an expired token closed, the API server's outage told."""

import asyncio
import types

from dashboard_api.live import hub as hub_mod
from dashboard_api.live.channel import GONE, UNAUTHORIZED, Channel
from dashboard_api.live.hub import DEBOUNCE, RECHECK, Hub
from dashboard_api.serving.errors import ApiError


class Rows:
    namespaces = ("ns",)

    def __init__(self, world):
        self.world = world

    def version(self):
        return self.world.version


class Pipeline:
    decorators = ()

    def __init__(self, world):
        self.world = world

    def fetch(self, handle, api):
        async def cached(kind):
            return self.world.cached
        return types.SimpleNamespace(close=lambda: None, cached=cached)

    async def validator(self, fetch, kind, namespaces, query):
        self.world.checks += 1
        if self.world.error is not None:
            raise self.world.error
        return self.world.tag, Rows(self.world)


class World:
    """The cluster as the hub sees it; ``version`` and ``tag`` move as its lists change."""

    def __init__(self):
        self.version, self.tag, self.error, self.checks = 1, "t1", None, 0
        self.cached = False   # whether the kind is one the cache holds
        self.since = None
        self.now = 100.0
        self.cluster = types.SimpleNamespace(
            name="c", api=None, pipeline=Pipeline(self), cache=None,
            unanswered_since=lambda: self.since)
        self.hub = Hub(self.cluster, clock=lambda: self.now, wall=lambda: 2e9)
        self.hub._wake = lambda: None   # the tests turn the loop themselves

    def connect(self, token="token"):
        sent, closed = [], []
        channel = Channel(self.hub, lambda m: sent.append(m) or True,
                          lambda code, reason: closed.append((code, reason)),
                          handle_for=None, clock=lambda: self.now)
        channel.sent, channel.closes = sent, closed
        channel.signed_in(("handle", token), token)
        return channel

    def change(self, tag):
        self.version += 1
        self.tag = tag


def run(coro):
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def changed(channel):
    return [m for m in channel.sent if m["type"] == "changed"]


def test_a_notice_when_the_validator_moved_at_most_one_a_second():
    async def scenario():
        world = World()
        hub = world.hub
        channel = world.connect()
        await hub.subscribe(channel, "pods", "api/v1/pod/ns")
        assert channel.sent[-1] == {"type": "subscribed", "id": "pods"}
        await hub._tick()
        assert changed(channel) == [] and world.checks == 1      # nothing moved: no check
        world.version += 1                                        # moved, same page
        await hub._tick()
        assert changed(channel) == [] and world.checks == 2
        world.change("t2")
        await hub._tick()
        assert changed(channel) == [{"type": "changed", "id": "pods"}]
        world.now += 0.25
        world.change("t3")                                        # within the second
        await hub._tick()
        assert len(changed(channel)) == 1
        world.now += DEBOUNCE                                     # told at its end
        await hub._tick()
        assert len(changed(channel)) == 2 and hub.notices == 2
        world.now += RECHECK                                      # checked again anyway
        checks = world.checks
        await hub._tick()
        assert world.checks == checks + 1 and len(changed(channel)) == 2
    run(scenario())


def test_a_right_taken_away_ends_the_subscription_a_refused_token_the_connection():
    async def scenario():
        world = World()
        hub = world.hub
        channel = world.connect()
        await hub.subscribe(channel, "pods", "api/v1/pod/ns")
        world.version += 1
        world.error = ApiError(403, 'pods is forbidden: User "a" cannot list resource "pods"')
        await hub._tick()
        assert channel.sent[-1]["type"] == "refused" and channel.sent[-1]["code"] == 403
        assert channel.subscriptions == {} and not channel.closed
        world.error = None
        await hub.subscribe(channel, "pods", "api/v1/pod/ns")
        world.version += 1
        world.error = ApiError(401, "Unauthorized")
        await hub._tick()
        assert channel.closed and channel.closes[0][0] == UNAUTHORIZED
        assert channel not in hub.channels
        # The API server away: the subscription stays, tried again later.
        other = world.connect()
        world.error = None
        await hub.subscribe(other, "pods", "api/v1/pod/ns")
        world.version += 1
        world.error = ApiError(503, "the API server is unreachable")
        await hub._tick()
        assert "pods" in other.subscriptions and not other.closed
    run(scenario())


def test_expired_credentials_close_the_connection_and_outages_are_told():
    async def scenario():
        world = World()
        hub = world.hub
        fresh, stale = world.connect(), world.connect()
        stale.expires = 1e9   # long past (the wall clock says 2e9)
        world.since = 2e9 - 30
        await hub._tick()
        assert stale.closed and stale.closes[0][0] == UNAUTHORIZED
        assert "expired at 2001-09-09T01:46:40Z" in stale.closes[0][1]
        told = [m for m in fresh.sent if m["type"] == "cluster"]
        assert told[0]["answering"] is False and told[0]["since"].endswith("Z")
        assert "has not answered since" in told[0]["message"]
        await hub._tick()
        assert len([m for m in fresh.sent if m["type"] == "cluster"]) == 1   # told once
        world.since = None
        await hub._tick()
        assert fresh.sent[-1] == {"type": "cluster", "answering": True}
        hub.close_all("this cluster is no longer served here")
        assert fresh.closes == [(GONE, "this cluster is no longer served here")]
        assert not hub.active
    run(scenario())


def test_lists_the_gateway_cannot_watch_are_refused():
    async def scenario():
        world = World()
        channel = world.connect()
        original = Rows.version
        Rows.version = lambda self: None   # rows read from the API server
        try:
            await world.hub.subscribe(channel, "s", "api/v1/secret/ns")
        finally:
            Rows.version = original
        assert channel.sent[-1]["code"] == 501 and channel.sent[-1]["reason"] == "NotWatched"
        await world.hub.subscribe(channel, "n", "api/v1/node")
        assert channel.sent[-1]["code"] == 501 and world.checks == 1   # not even checked
    run(scenario())


def test_a_cached_list_answered_from_the_api_server_for_now_is_watched_later():
    """Its store re-lists (rows without a version), or the API server does not answer the
    check: subscribed all the same, checked again later, and told of the change once its
    validator can be made again."""
    async def scenario():
        world = World()
        world.cached = True
        channel = world.connect()
        original = Rows.version
        Rows.version = lambda self: None   # answered from the API server for now
        try:
            await world.hub.subscribe(channel, "s", "api/v1/pod/ns")
            assert channel.sent[-1] == {"type": "subscribed", "id": "s"}
            checks = world.checks
            await world.hub._tick()
            assert world.checks == checks   # not again before UNSERVED_RETRY
            world.now += hub_mod.UNSERVED_RETRY
            await world.hub._tick()
            assert world.checks == checks + 1 and not changed(channel)
        finally:
            Rows.version = original
        world.now += hub_mod.UNSERVED_RETRY
        await world.hub._tick()   # served from the cache again: a validator, told
        assert len(changed(channel)) == 1

        world.error = ApiError(504, "the API server did not answer in time", "Timeout")
        await world.hub.subscribe(channel, "t", "api/v1/pod/ns")
        assert channel.sent[-1] == {"type": "subscribed", "id": "t"}
        world.error = None
        world.now += hub_mod.RETRY + DEBOUNCE
        await world.hub._tick()
        assert {m["id"] for m in changed(channel)} == {"s", "t"}
        assert not channel.closes
    run(scenario())


def test_the_loop_runs_while_there_are_connections():
    async def scenario():
        world = World()
        del world.hub._wake   # the real one
        tick, hub_mod.TICK = hub_mod.TICK, 0.01
        try:
            channel = world.connect()
            assert world.hub.active and not world.hub._task.done()
            channel.close(4000, "bye")
            await asyncio.sleep(0.05)
            assert world.hub._task.done()
        finally:
            hub_mod.TICK = tick
    run(scenario())
