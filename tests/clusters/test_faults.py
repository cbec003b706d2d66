"""One cluster hung or down never slows another (issue 28, item 4): beta's API server is
reached through a fault proxy (tests/faults/proxy.py); while it hangs or refuses, alpha's
pages answer in their usual time, even with more of beta's calls stuck than a gateway has
workers, and beta's answer the specification's JSON 504/503 at their deadline; then beta
recovers without a restart."""

import concurrent.futures
import time

import pytest

from tests.clusters.conftest import CONFIGMAP, pod_names, serving, write_kubeconfig
from tests.cluster.procs import free_ports
from tests.faults.proxy import FaultProxy
from tests.gateway.helpers import assert_error
from tests.support.waiting import wait_for

CONNECT = 1.0       # --apiserver-connect-timeout
DEADLINE = 3.0      # --apiserver-request-timeout
MARGIN = 1.5        # past its deadline, on a loaded 2-core machine (as tests/faults)
FAST = 1.0          # each of alpha's pages, far below the deadline
FLAGS = ("--apiserver-connect-timeout=%gs" % CONNECT, "--apiserver-request-timeout=%gs" % DEADLINE,
         "--watch-idle-timeout=5s", "--access-cache-ttl=1s")
STUCK = 40          # beta's calls at once: more than a gateway's 16 workers (--api-workers)
ALPHA_PAGES = 20


@pytest.fixture(scope="module")
def beta_proxy(beta):
    with FaultProxy.in_front_of(beta.cluster.url) as proxy:
        yield proxy


@pytest.fixture(scope="module")
def faulty(alpha, beta, beta_proxy, tmp_path_factory):
    """A gateway reaching beta through the proxy (same CA, same name), alpha straight, and a
    cluster "down" that never was up."""
    path = str(tmp_path_factory.mktemp("faults") / "kubeconfig")
    # "down": an address where nothing listens, from the start (beta's CA and token).
    down = "https://127.0.0.1:%d" % free_ports(1)[0]
    write_kubeconfig(path, alpha=(alpha, None), beta=(beta, beta_proxy.url), down=(beta, down))
    with serving(path, (alpha, beta), *FLAGS) as gw:
        yield gw


@pytest.fixture
def proxy(beta_proxy):
    yield beta_proxy
    beta_proxy.passing()


def timed(gw, path, token):
    start = time.monotonic()
    reply = gw.get(path, token=token)
    return reply, time.monotonic() - start


@pytest.mark.parametrize("fault, status, reason", [("hang", 504, "Timeout"),
                                                   ("refuse", 503, "ServiceUnavailable")])
def test_beta_hung_or_down_never_slows_alpha(faulty, proxy, alpha, beta, fault, status, reason):
    on_alpha, on_beta = faulty.at("/clusters/alpha"), faulty.at("/clusters/beta")
    # Details: each a call of the API server in a worker (uncached lists would wait for
    # one of the --max-large-lists slots first, not for a worker).
    beta_paths = ["/api/v1/namespace/" + beta.namespace,
                  "/api/v1/configmap/%s/%s" % (beta.namespace, CONFIGMAP)]
    alpha_paths = ["/api/v1/pod/" + alpha.namespace, "/api/v1/secret/" + alpha.namespace,
                   "/api/v1/namespace/" + alpha.namespace]
    for path in beta_paths:
        assert on_beta.get(path, token=beta.token).status == 200, path
    getattr(proxy, fault)()
    with concurrent.futures.ThreadPoolExecutor(STUCK) as pool:
        stuck = [pool.submit(timed, on_beta, beta_paths[i % 2], beta.token)
                 for i in range(STUCK)]
        time.sleep(0.3)   # beta's calls under way
        started = time.monotonic()
        pages = [timed(on_alpha, alpha_paths[i % 3], alpha.token) for i in range(ALPHA_PAGES)]
        alpha_seconds = time.monotonic() - started
        answers = [future.result(timeout=DEADLINE + 30) for future in stuck]
    worst = max(seconds for _, seconds in pages)
    print("%s: %d alpha pages in %.2fs (worst %.2fs) beside %d of beta's calls (worst %.2fs)"
          % (fault, ALPHA_PAGES, alpha_seconds, worst, STUCK, max(s for _, s in answers)))
    for reply, seconds in pages:
        assert reply.status == 200, reply
        assert seconds < FAST, "an alpha page took %.2fs while beta was %sing" % (seconds, fault)
    for reply, seconds in answers:
        assert seconds < DEADLINE + MARGIN, (seconds, reply)
        assert_error(reply, status, reason)
    # Beta's cached list answers at once or by its deadline: 200 from the cache, or JSON.
    reply, seconds = timed(on_beta, "/api/v1/pod/" + beta.namespace, beta.token)
    assert seconds < DEADLINE + MARGIN and reply.status in (200, 503, 504), (seconds, reply)
    # The root is alpha: as fast; and the process's own routes too.
    for path, token in ((alpha_paths[0], alpha.token), ("/healthz", None), ("/readyz", None),
                        ("/metrics", None)):
        reply, seconds = timed(faulty, path, token)
        assert reply.status == 200 and seconds < FAST, (path, seconds, reply)
    proxy.passing()
    # Beta recovers by itself, its pages from its API server again, its cache watching.
    wait_for(lambda: on_beta.get(beta_paths[0], token=beta.token).status == 200, timeout=15,
             interval=0.3, what="beta's pages after the %s" % fault)
    assert pod_names(on_beta, beta, timeout=20)


def test_a_cluster_down_from_the_start_is_a_503_and_listed_unreachable(faulty, alpha, beta):
    on_down = faulty.at("/clusters/down")
    for path in ("/api/v1/namespace/" + beta.namespace, "/api/v1/secret/" + beta.namespace,
                 "/api/v1/pod/" + beta.namespace):
        reply, seconds = timed(on_down, path, beta.token)
        assert seconds < CONNECT + MARGIN, (path, seconds, reply)
        assert_error(reply, 503, "ServiceUnavailable")
    reply, seconds = timed(faulty, "/api/v1/pod/" + alpha.namespace, alpha.token)
    assert reply.status == 200 and seconds < FAST, (seconds, reply)

    def listed():
        reply, seconds = timed(faulty, "/api/v1/clusters", alpha.token)
        assert reply.status == 200 and seconds < FAST, (seconds, reply)
        clusters = {c["name"]: c for c in reply.json()["clusters"]}
        return clusters if clusters["down"]["reachable"] is False else None
    clusters = wait_for(listed, timeout=10, interval=0.3, what="down listed unreachable")
    assert clusters["down"]["version"] is None, clusters
    assert clusters["alpha"]["reachable"] is True, clusters
