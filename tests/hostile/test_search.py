"""A search's input is bounded before work is spent on it, and the work it causes never holds
the event loop (issue #38): the largest queries the parser takes, asked of every kind by eight
clients at once, while the probe asks /healthz and an authenticated list every 0.2 s."""

import concurrent.futures
import time

from tests.gateway.helpers import assert_error
from tests.support.probe import Probe

WIDE = "|".join("v%d" % i for i in range(16))
# Each as large as the parser takes: 16 terms, 16 alternatives each, 256 characters.
ATTACKS = [
    " ".join(["a"] * 16),
    " ".join(["label:k%d!=%s" % (i, WIDE[:10]) for i in range(16)])[:256].rsplit(" ", 1)[0],
    "image:" + WIDE + " status:" + WIDE + " node:" + WIDE[:60],
    " ".join(["e"] * 15) + " kind:event|pod|replicaset",
    "",
]


def test_the_largest_queries_from_many_clients_keep_the_gateway_answering(gateway,
                                                                          admin_token):
    for q in ATTACKS:
        assert len(q) <= 256 and len(q.split()) <= 16, q

    def ask(q):
        reply = gateway.get("/api/v1/search", token=admin_token,
                            params={"q": q, "itemsPerPage": "500", "page": "2"})
        assert reply.status == 200, (q, reply)
        return reply.json()["listMeta"]["totalItems"]

    deadline = time.monotonic() + 5
    with Probe(gateway, admin_token) as probe:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            rounds = 0
            while time.monotonic() < deadline and rounds < 40:
                list(pool.map(ask, ATTACKS * 2))
                rounds += 1
    probe.assert_responsive(1.0)


def test_oversized_queries_are_refused_before_any_work(gateway, admin_token):
    for q in ("a" * 257, " ".join(["a"] * 17), "kind:" + WIDE + "|x",
              "label:" + "k" * 64 + "=v", "label:a=" + "v" * 64):
        assert_error(gateway.get("/api/v1/search", token=admin_token, params={"q": q}), 400)
