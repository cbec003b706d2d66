"""Every call to the API server has a deadline (issue 27, item 1): a hung API server, a slow
or trickling one, answers that are lost. Each answer comes within the deadline plus a margin,
as the specification's JSON error when it is not a 200, and the gateway recovers by itself."""

import base64
import concurrent.futures
import secrets
import time

from tests.faults.conftest import CONNECT, DEADLINE, MARGIN, timed
from tests.gateway.helpers import assert_error

UNCACHED = "/api/v1/secret/kube-system"        # secrets: listed from the API server, always
DETAIL = "/api/v1/namespace/default"


def json_error_or_ok(reply, seconds, bound):
    assert seconds < bound, "answered in %.2fs (bound %.1fs): %r" % (seconds, bound, reply)
    if reply.status != 200:
        body = reply.json()
        assert body["status"] == "Failure" and body["code"] == reply.status, body
        assert reply.status in (503, 504), body
    return reply.status


def test_a_hung_api_server_is_a_504_at_the_deadline_and_holds_no_worker(cluster, proxy, faulty):
    token = cluster.admin_token
    assert faulty.get(UNCACHED, token=token).status == 200
    proxy.hang()
    paths = [UNCACHED, DETAIL] * 20   # 40 at once: more than the 16 workers
    with concurrent.futures.ThreadPoolExecutor(len(paths)) as pool:
        started = time.monotonic()
        answers = list(pool.map(lambda p: timed(faulty.get, p, token=token), paths))
        elapsed = time.monotonic() - started
    worst = max(seconds for _, seconds in answers)
    for reply, seconds in answers:
        assert seconds < DEADLINE + MARGIN, (seconds, reply)
        body = assert_error(reply, 504, "Timeout")
        assert "the API server did not" in body["message"], body
    print("hang: 40 concurrent reads answered 504 within %.2fs (worst %.2fs)" % (elapsed, worst))
    # Meanwhile the process itself is fine, and says so.
    for path in ("/healthz", "/readyz"):
        reply, seconds = timed(faulty.get, path)
        assert reply.status == 200 and seconds < 0.5, (path, reply, seconds)
    # No worker is held: the calls gave up at their deadline, so the next ones start at once
    # (and are answered at their own deadline, not after a queue of stuck calls).
    reply, seconds = timed(faulty.get, DETAIL, token=token)
    assert_error(reply, 504, "Timeout")
    assert seconds < DEADLINE + MARGIN, seconds
    proxy.passing()
    # Recovery without a restart: the timed-out connections were closed, not pooled again.
    reply, seconds = timed(faulty.get, UNCACHED, token=token)
    assert reply.status == 200 and seconds < 1.0, (reply, seconds)


def test_a_write_whose_answer_is_lost_says_its_outcome_is_unknown(cluster, proxy, faulty):
    token = cluster.admin_token
    name = "lost-" + secrets.token_hex(3)
    csrf = faulty.csrf_token("namespace")
    assert faulty.get(UNCACHED, token=token).status == 200   # a live pooled connection
    # Requests reach the API server late and their answers later still: past the deadline.
    proxy.latency(DEADLINE * 0.75)
    reply, seconds = timed(faulty.request, "POST", "/api/v1/namespace", token=token,
                           body={"name": name}, headers={"X-CSRF-TOKEN": csrf})
    assert seconds < DEADLINE + MARGIN, seconds
    body = assert_error(reply, 504, "Timeout")
    assert "outcome of this POST is unknown" in body["message"], body
    assert "may have been applied" in body["message"], body
    proxy.passing()
    # It was (the request got through; only its answer was lost): once, not twice.
    cluster.wait_for(lambda: cluster.request("GET", "/api/v1/namespaces/" + name)[0] == 200,
                     timeout=10, what="the namespace whose create timed out")
    cluster.request("DELETE", "/api/v1/namespaces/" + name)


def test_a_refused_connection_is_a_503_and_nothing_is_applied(cluster, proxy, faulty):
    token = cluster.admin_token
    name = "refused-" + secrets.token_hex(3)
    csrf = faulty.csrf_token("namespace")
    proxy.refuse()
    reply, seconds = timed(faulty.request, "POST", "/api/v1/namespace", token=token,
                           body={"name": name}, headers={"X-CSRF-TOKEN": csrf})
    assert seconds < CONNECT + MARGIN, seconds
    body = assert_error(reply, 503, "ServiceUnavailable")
    assert "unknown" not in body["message"], body   # refused: certainly not sent
    for _ in range(10):   # lists: from the cache (200) or a JSON 503, at once
        json_error_or_ok(*timed(faulty.get, "/api/v1/namespace", token=token), bound=1.0)
    # /readyz stays 200: every replica would be failing alike, and dropping them all from
    # the Service would turn these JSON answers into a proxy's error page.
    assert faulty.get("/readyz").status == 200
    assert faulty.get("/healthz").status == 200
    proxy.passing()
    assert cluster.request("GET", "/api/v1/namespaces/" + name)[0] == 404
    reply = faulty.request("POST", "/api/v1/namespace", token=token, body={"name": name},
                           headers={"X-CSRF-TOKEN": faulty.csrf_token("namespace")})
    assert reply.status == 201, reply
    cluster.request("DELETE", "/api/v1/namespaces/" + name)


def test_latency_under_the_deadline_is_only_slower_and_a_trickle_past_it_is_a_504(
        cluster, proxy, faulty, namespace):
    token = cluster.admin_token
    # 30 KB of secret data: the API server's answer to the list is at least that long.
    status, _ = cluster.request("POST", "/api/v1/namespaces/%s/secrets" % namespace, {
        "metadata": {"name": "big"}, "data": {"blob": base64.b64encode(b"x" * 22_000).decode()}})
    assert status == 201
    big = "/api/v1/secret/" + namespace
    proxy.latency(0.1)
    for path in (big, DETAIL):
        reply, seconds = timed(faulty.get, path, token=token)
        assert reply.status == 200, reply
    proxy.passing()
    assert faulty.get(big, token=token).status == 200   # a live pooled connection
    # The answer arrives at 2 KB/s, so 30 KB take 15 s, over the deadline for the whole, while
    # each piece comes well within it.
    proxy.trickle(100, 0.05)
    reply, seconds = timed(faulty.get, big, token=token)
    assert seconds < DEADLINE + MARGIN, seconds
    assert_error(reply, 504, "Timeout")
    assert faulty.get("/healthz").status == 200
    proxy.passing()
    reply, seconds = timed(faulty.get, big, token=token)
    assert reply.status == 200 and seconds < 1.0, (reply, seconds)
