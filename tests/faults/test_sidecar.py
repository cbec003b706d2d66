"""The metrics sidecar through faults (issue 27, item 5): its scrapes have the same deadlines
as the gateway's calls, its pod watch the same idle limit; while its source is away it keeps
serving the window it has and says how old its newest scrape is, and it recovers by itself."""

import os
import time

from tests.cluster import users
from tests.faults.conftest import MARGIN, WATCH_IDLE
from tests.faults.proxy import FaultProxy
from tests.metrics import sidecar
from tests.metrics.sidecar import Sidecar, wait_points

SCRAPE_DEADLINE = 2.0


def wait_health(side, predicate, what, timeout):
    """Polled /healthz, each answer within a second whatever the API server does."""
    return sidecar.wait_health(side, predicate, what, timeout, within=1.0)


def test_the_sidecar_serves_its_window_through_a_hang_and_resumes_a_dropped_watch(
        cluster, tmp_path):
    # The sidecar's "API server" is the metrics stand-in (which passes pod reads on to the
    # real one); the proxy sits in front of it.
    with FaultProxy.in_front_of(cluster.metrics_url) as proxy:
        kubeconfig = str(tmp_path / "sidecar.kubeconfig")
        users.write_kubeconfig(kubeconfig, proxy.url, cluster.ca_file, "metrics-sidecar",
                               cluster.admin_token)
        side = Sidecar(kubeconfig, resolution="1s", duration="120s")
        side.argv += ["--scrape-timeout", "%gs" % SCRAPE_DEADLINE,
                      "--apiserver-connect-timeout", "1s",
                      "--watch-idle-timeout", "%gs" % WATCH_IDLE]
        side.start()
        try:
            wait_health(side, lambda h: h["scrapes"] >= 2 and all(
                w["state"] == "synced" for w in h["podWatches"]), "two scrapes", 30)
            nodes = wait_points(side, "/api/v1/node", 2)
            points = sum(len(i["dataPoints"]) for i in nodes["items"])

            proxy.hang()
            hung = time.monotonic()
            failed = wait_health(side, lambda h: h["failures"] >= 2, "failed scrapes",
                                 2 * (SCRAPE_DEADLINE + MARGIN) + 2)
            assert "did not answer within" in failed["lastError"] \
                or "timed out" in failed["lastError"], failed
            # The window it has is still served, and its age is said.
            status, body = side.get("/api/v1/node")
            assert status == 200
            assert sum(len(i["dataPoints"]) for i in body["items"]) >= points
            old = wait_health(side, lambda h: h["lastSuccessAgeSeconds"] > 3, "an old scrape",
                              10)
            print("sidecar hang: 2 scrapes failed after %.1fs; newest scrape %.1fs old"
                  % (time.monotonic() - hung, old["lastSuccessAgeSeconds"]))

            proxy.passing()
            wait_health(side, lambda h: h["lastSuccessAgeSeconds"] < 1.5, "scrapes again",
                        2 * SCRAPE_DEADLINE + 5)
            # The pod watch, black-holed by the hang, is resumed once it has been silent for
            # the idle limit (it would wait forever without).
            resumed = wait_health(side, lambda h: all(
                w["state"] == "synced" and w["restarts"] >= 1 for w in h["podWatches"]),
                "the pod watch resumed", WATCH_IDLE + 10)
            assert any("heard nothing" in (w["lastError"] or "")
                       or "timed out" in (w["lastError"] or "")
                       for w in resumed["podWatches"]), resumed
            assert side.alive()
        finally:
            side.stop()
            os.unlink(side.log_path)
