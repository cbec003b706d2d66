"""Attack: a low-rights caller asking for "all namespaces" to make the gateway fan out
SelfSubjectAccessReviews (one per candidate namespace and kind, up to 256 per kind before).

A request now makes at most MAX_REVIEWS_PER_REQUEST reviews, a caller has at most
PER_CALLER_CONCURRENCY in flight, and every answer, negative ones included, is remembered for
the access cache's TTL: counted on the real gateway with /metrics
(dashboard_cache_authorization_checks), and the bounds themselves in process.
"""

import asyncio
import concurrent.futures
import re
import secrets
import time

import pytest

from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists import access as access_mod
from tests.support.gateway import Gateway
from tests.support.probe import Probe

RBAC = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings"


def reviews_made(gw):
    text = gw.get("/metrics").data.decode()
    found = re.search(r'^dashboard_cache_authorization_checks\{cluster="[^"]+",result="miss"\} (\S+)$', text,
                      re.M)
    assert found, text[-2000:]
    return int(float(found.group(1)))


@pytest.fixture
def low_rights(cluster):
    """(namespace, token) of a service account that may read only its own namespace."""
    namespace = cluster.new_namespace("a-fanout")  # the first candidate after "default"
    name = "low-" + secrets.token_hex(3)
    status, body = cluster.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                                   {"metadata": {"name": name}})
    assert status == 201, body
    status, body = cluster.request("POST", RBAC % namespace, {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]})
    assert status == 201, body
    token = cluster.service_account_token(namespace, name)
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"namespace": namespace, "verb": "list",
                                              "resource": "pods"}}}
    cluster.wait_for(lambda: cluster.request(
        "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review,
        token=token)[1].get("status", {}).get("allowed"), timeout=30, what="the list right")
    yield namespace, token
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


@pytest.fixture
def many_namespaces(cluster):
    """More namespaces than a request may review (each a candidate of "all namespaces")."""
    tag = secrets.token_hex(3)
    names = ["fan-%s-%d" % (tag, n) for n in range(access_mod.MAX_REVIEWS_PER_REQUEST + 10)]

    def create(name):
        status, body = cluster.request("POST", "/api/v1/namespaces",
                                       {"metadata": {"name": name}})
        assert status == 201, body

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(create, names))
    yield names
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: cluster.request("DELETE", "/api/v1/namespaces/" + n), names))


def test_an_all_namespaces_list_makes_a_bounded_number_of_reviews(cluster, low_rights,
                                                                  many_namespaces,
                                                                  admin_token):
    namespace, token = low_rights
    gw = Gateway.start(cluster, "--access-cache-ttl=30s")
    try:
        gw.wait_cache_synced()
        existing = len(cluster.request("GET", "/api/v1/namespaces")[1]["items"])
        with Probe(gw, admin_token) as probe:
            # The probe's own list costs one review, remembered for the TTL: before counting.
            cluster.wait_for(lambda: probe.samples["list"], timeout=10, what="a probe")
            before = reviews_made(gw)
            started = time.monotonic()
            reply = gw.get("/api/v1/pod", token=token)
            assert reply.status == 200, reply
            seconds = time.monotonic() - started
            first = reviews_made(gw) - before
            # The same list again: the candidates the first one left out are asked now...
            assert gw.get("/api/v1/pod", token=token).status == 200
            second = reviews_made(gw) - before - first
            # ...and then every answer, the refusals too, is remembered.
            for _ in range(3):
                assert gw.get("/api/v1/pod", token=token).status == 200
            again = reviews_made(gw) - before - first - second
        probe.assert_responsive(max_seconds=1.0)
        assert reply.json()["listMeta"]["totalItems"] == 0  # only its own (empty) namespace
        # The namespaces' reviews, the cluster-wide one, and a few for the related kinds the
        # list reads in the caller's own namespace (events): far fewer than the candidates.
        assert existing > access_mod.MAX_REVIEWS_PER_REQUEST + 5
        bound = access_mod.MAX_REVIEWS_PER_REQUEST + 5
        assert access_mod.MAX_REVIEWS_PER_REQUEST <= first <= bound, (first, existing)
        assert 0 < second <= existing + 1 - access_mod.MAX_REVIEWS_PER_REQUEST, second
        assert again == 0, again
        print("\nall-namespaces list of a low-rights caller: %d namespaces, %d reviews "
              "(bound %d), %.2f s; the next list %d reviews, 3 more: %d"
              % (existing, first, bound, seconds, second, again))
    finally:
        gw.stop()


# --- the bounds, in process -------------------------------------------------------------------


class CountingHandle:
    """A caller whose reviews take a moment and are counted: all refused."""

    token = "t"
    impersonation = ()

    def __init__(self):
        self.calls = 0
        self.running = 0
        self.most = 0

    async def can_i(self, **attributes):
        self.calls += 1
        self.running += 1
        self.most = max(self.most, self.running)
        await asyncio.sleep(0.01)
        self.running -= 1
        return False


PODS = Resource("", "v1", "pods", "Pod", True, ())


@pytest.mark.gen_test(timeout=10)
async def test_reviews_are_bounded_per_caller_and_per_request():
    access = access_mod.Access(ttl=60)
    caller = CountingHandle()
    budgets = [access_mod.Budget(), access_mod.Budget()]
    # Two requests of one caller, each asking about 300 namespaces.
    answers = await asyncio.gather(*(access.allowed(caller, "list", PODS, "ns%d" % n,
                                                    budget=budget)
                                     for budget in budgets for n in range(300)))
    assert not any(answers)
    # Each request made its budget's worth (the second shared the first's reviews of the
    # namespaces both asked first, and spent its own budget on the next ones), never more.
    assert caller.calls == 2 * access_mod.MAX_REVIEWS_PER_REQUEST
    assert budgets[0].left == budgets[1].left == 0
    assert caller.most == access_mod.PER_CALLER_CONCURRENCY
    # Refusals are remembered: asking again costs no review and no budget.
    fresh = access_mod.Budget()
    assert not await access.allowed(caller, "list", PODS, "ns1", budget=fresh)
    assert caller.calls == 2 * access_mod.MAX_REVIEWS_PER_REQUEST
    assert fresh.left == fresh.limit
    assert not access._slots  # nothing kept per caller once its reviews are done
