"""Pushed "changed" notices (issue #40, part 2 of its text) end to end: a browser's connection
to /api/v1/live, subscriptions authorized as their lists are, a notice when a list changed and
only then, at most one a second per subscription, and every failure mode said (a token not
accepted, no right, a bad path, a list the gateway cannot watch)."""

import asyncio
import time

import pytest

from tests.live.client import Live
from tests.resources import kube


def configmap(cluster, namespace, name):
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": name}, "data": {"k": "v"}})


def root_ca_in(cluster, namespace):
    cluster.wait_for(lambda: cluster.request(
        "GET", "/api/v1/namespaces/%s/configmaps/kube-root-ca.crt" % namespace)[0] == 200,
        what="the namespace's root CA config map")


@pytest.mark.gen_test(timeout=90)
async def test_a_subscription_is_told_when_its_list_changed_and_only_then(
        gateway, cluster, namespace, other_namespace, admin_token):
    root_ca_in(cluster, namespace)
    root_ca_in(cluster, other_namespace)
    live = await Live.connect(gateway, admin_token)
    assert live.ready == {"type": "ready", "answering": True}
    path = "api/v1/configmap/%s?sortBy=a,name&itemsPerPage=10" % namespace
    assert await live.subscribe("maps", path) == {"type": "subscribed", "id": "maps"}
    await live.nothing()

    configmap(cluster, namespace, "first")
    assert await live.next() == {"type": "changed", "id": "maps"}
    await live.nothing()

    # A change elsewhere is not this list's.
    configmap(cluster, other_namespace, "elsewhere")
    await live.nothing()

    # Many changes at once: at most one notice a second, and the last change is told.
    started = time.monotonic()
    for i in range(6):
        configmap(cluster, namespace, "burst-%d" % i)
    notices = 0
    while True:
        try:
            message = await live.next(timeout=2.5)
        except asyncio.TimeoutError:
            break
        assert message == {"type": "changed", "id": "maps"}, message
        notices += 1
    elapsed = time.monotonic() - started
    assert 1 <= notices <= elapsed + 1, (notices, elapsed)

    # Replaced by another list under the same id, then unsubscribed: nothing more.
    assert await live.subscribe("maps", "api/v1/configmap/" + other_namespace) == {
        "type": "subscribed", "id": "maps"}
    configmap(cluster, namespace, "not-watched-now")
    await live.nothing()
    await live.send({"type": "unsubscribe", "id": "maps"})
    await asyncio.sleep(0.2)
    configmap(cluster, other_namespace, "after-unsubscribe")
    await live.nothing()
    live.close()


@pytest.mark.gen_test(timeout=60)
async def test_subscriptions_are_authorized_and_checked_as_their_lists(
        gateway, cluster, namespace, admin_token, norights_token):
    live = await Live.connect(gateway, norights_token)
    refused = await live.subscribe("pods", "api/v1/pod/" + namespace)
    assert refused["type"] == "refused" and refused["code"] == 403, refused
    assert 'User "nobody" cannot list resource "pods"' in refused["message"], refused
    live.close()

    live = await Live.connect(gateway, admin_token)
    for path, code, reason in (("api/v1/pod/%s?itemsPerPage=many" % namespace, 400,
                                "BadRequest"),
                               ("api/v1/nosuchkind", 404, "NotFound"),
                               ("/etc/passwd", 400, "BadRequest"),
                               ("https://elsewhere/api/v1/pod", 400, "BadRequest"),
                               ("api/v1/node", 501, "NotWatched"),
                               ("api/v1/secret/" + namespace, 501, "NotWatched")):
        answer = await live.subscribe("x", path)
        assert (answer["type"], answer["code"], answer["reason"]) == (
            "refused", code, reason), (path, answer)
    # Still open, still serving.
    assert (await live.subscribe("ok", "api/v1/pod/" + namespace))["type"] == "subscribed"
    live.close()


@pytest.mark.gen_test(timeout=60)
async def test_credentials_not_accepted_or_expired_end_the_connection(gateway, cluster,
                                                                      namespace):
    live = await Live.connect(gateway, "not-a-token-of-this-cluster")
    await live.send({"type": "subscribe", "id": "pods", "path": "api/v1/pod/" + namespace})
    code, reason = await live.closed()
    assert code == 4401 and "sign in again" in reason, (code, reason)

    # A JWT past its exp (the API server takes this one as an opaque static token).
    live = await Live.connect(gateway, cluster.expired_token)
    code, reason = await live.closed()
    assert code == 4401 and "the credentials expired at 2001-09-09" in reason, (code, reason)
