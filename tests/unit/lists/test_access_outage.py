"""Access answers through an outage of the API server (lists/access.py): the last answer serves
those it was given to, for the outage memory; one review at a time finds out whether the API
server is back; a token never answered gets a 503, a JWT past its exp a 401."""

import asyncio
import types

import pytest

from dashboard_api.lists.access import Access, Unreachable
from dashboard_api.serving.errors import ApiError
from tests.cluster.users import expired_jwt

PODS = types.SimpleNamespace(group="", plural="pods", path=lambda ns=None: "/api/v1/pods")


class Server:
    """The API server as the access reviews see it: up (answering ``allowed``) or away."""

    def __init__(self):
        self.up = True
        self.allowed = True
        self.reviews = 0
        self.gets = 0


class Handle:
    def __init__(self, server, token="token-a"):
        self.server = server
        self.token = token
        self.impersonation = ()

    async def can_i(self, **attributes):
        self.server.reviews += 1
        await asyncio.sleep(0)
        if not self.server.up:
            raise ApiError(503, "the API server is unreachable: NewConnectionError")
        return self.server.allowed

    async def get(self, path, params=None):
        self.server.gets += 1
        if not self.server.up:
            raise ApiError(503, "the API server is unreachable: NewConnectionError")
        raise ApiError(403, 'pods is forbidden: User "a" cannot list resource "pods"')


def access(now, wall=2_000_000_000.0, memory=3600.0):
    return Access(ttl=5.0, clock=lambda: now[0], memory=memory, wall=lambda: wall)


def run(coro):
    return asyncio.new_event_loop().run_until_complete(coro)


def test_the_last_answer_serves_those_it_was_given_to_while_the_server_is_away():
    async def scenario():
        now, server = [0.0], Server()
        answers = access(now)
        known, stranger = Handle(server), Handle(server, "token-b")
        assert await answers.allowed(known, "list", PODS) is True
        assert answers.knows("token-a") and not answers.knows("token-b")
        server.up = False
        now[0] = 10.0   # past the ttl
        assert await answers.allowed(known, "list", PODS) is True
        assert answers.away() and answers.remembered == 1
        with pytest.raises(Unreachable) as raised:
            await answers.allowed(stranger, "list", PODS)
        assert raised.value.code == 503
        assert "has not checked these credentials before" in raised.value.message
        # Past the memory: as a stranger.
        now[0] = 3700.0
        with pytest.raises(Unreachable) as raised:
            await answers.allowed(known, "list", PODS)
        assert "too long ago" in raised.value.message
        await asyncio.sleep(0.01)   # the probe that went out meanwhile
    run(scenario())


def test_one_review_at_a_time_finds_out_whether_the_server_is_back():
    async def scenario():
        now, server = [0.0], Server()
        answers = access(now)
        handle = Handle(server)
        await answers.allowed(handle, "list", PODS)
        server.up = False
        now[0] = 10.0
        await answers.allowed(handle, "list", PODS)       # the review that met the outage
        reviews = server.reviews
        for ns in ("a", "b", "c"):                         # other keys: from memory, no review
            with pytest.raises(Unreachable):
                await answers.allowed(handle, "list", PODS, ns)
        assert server.reviews == reviews
        now[0] = 16.0                                      # a ttl later: one probe goes out
        for _ in range(3):
            assert await answers.allowed(handle, "list", PODS) is True
        await asyncio.sleep(0.01)
        assert server.reviews == reviews + 1 and answers.away()
        server.up = True
        now[0] = 22.0
        await answers.allowed(handle, "list", PODS)        # from memory, and a probe
        await asyncio.sleep(0.01)
        assert not answers.away()                          # the probe was answered
    run(scenario())


def test_a_jwt_past_its_expiry_is_refused_while_the_server_is_away():
    async def scenario():
        now, server = [0.0], Server()
        answers = access(now)
        handle = Handle(server, expired_jwt("alice"))
        assert await answers.allowed(handle, "list", PODS) is True   # the server took it
        server.up = False
        now[0] = 10.0
        with pytest.raises(ApiError) as raised:
            await answers.allowed(handle, "list", PODS)
        assert raised.value.code == 401 and "the token expired at 2001-" in raised.value.message
    run(scenario())


def test_a_refusal_stays_the_api_servers_own_while_it_is_away():
    async def scenario():
        now, server = [0.0], Server()
        server.allowed = False
        answers = access(now)
        handle = Handle(server)
        with pytest.raises(ApiError) as first:
            await answers.require_list(handle, PODS, ())
        server.up = False
        now[0] = 10.0
        gets = server.gets
        with pytest.raises(ApiError) as again:
            await answers.require_list(handle, PODS, ())
        assert again.value is first.value and server.gets <= gets + 1
    run(scenario())


def test_without_memory_an_outage_is_the_api_servers_error():
    async def scenario():
        now, server = [0.0], Server()
        answers = access(now, memory=0)
        handle = Handle(server)
        await answers.allowed(handle, "list", PODS)
        server.up = False
        now[0] = 10.0
        with pytest.raises(ApiError) as raised:
            await answers.allowed(handle, "list", PODS)
        assert raised.value.code == 503 and not isinstance(raised.value, Unreachable)
    run(scenario())
