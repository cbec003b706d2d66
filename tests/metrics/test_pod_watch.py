"""The sidecar keeps the pods' facts by LIST+WATCH against the real API server (through the
metrics stand-in's pass-through): scrapes make no LIST of pods once they are watched, a pod made
later is joined from its watch event, a deleted one leaves; without the ``watch`` verb, every
scrape lists the pods as before. LISTs are counted by the sidecar itself (``podLists`` on its
/healthz). The 410 and the re-list are tests/unit/metrics_sidecar/test_podwatch.py's."""

import time

from tests.metrics.conftest import new_sidecar
from tests.metrics.sidecar import health, series, sidecar_identity, wait_health, wait_points
from tests.resources import kube

LATE = kube.container("app", resources={"requests": {"cpu": "300m", "memory": "96Mi"},
                                        "limits": {"cpu": "600m", "memory": "192Mi"}})


def requests_of(side, ns, pod):
    body = wait_points(side, "/api/v1/pod/%s/%s" % (ns, pod), 1,
                       metricNames="cpu/request,memory/limit")
    return {i["metricName"]: set(series(i).values()) for i in body["items"]}


def test_a_later_pod_is_joined_from_the_watch_and_scrapes_list_no_pods(
        cluster, sidecar_token, state_dir, metrics_ns):
    side = new_sidecar(cluster, sidecar_token, state_dir, "watch", resolution="1s",
                       duration="3s")
    side.argv += ["--namespaces", metrics_ns]
    side.start()
    try:
        start = wait_health(side, lambda h: h["scrapes"] >= 1
                            and h["podWatches"][0]["state"] == "synced", "a synced watch")
        # One LIST, the watch's: the first scrape waited for it instead of listing too.
        assert start["podLists"] == 1, start
        kept = start["podWatches"][0]["kept"]
        assert kept >= 5   # solo, web x2, rs, claimer
        kube.pod(cluster, metrics_ns, "late", containers=[LATE])
        kube.wait_pods(cluster, metrics_ns, "app=late", 1)
        # Requests and limits come only from the pod's facts (PodMetrics has none).
        assert requests_of(side, metrics_ns, "late") == {"cpu/request": {300_000_000},
                                                         "memory/limit": {192 << 20}}
        joined = health(side)
        assert joined["podWatches"][0]["kept"] == kept + 1
        assert joined["podWatches"][0]["events"] >= 1

        status, _ = cluster.request("DELETE", "/api/v1/namespaces/%s/pods/late" % metrics_ns,
                                    {"gracePeriodSeconds": 0})
        assert status == 200
        gone = wait_health(side, lambda h: h["podWatches"][0]["kept"] == kept,
                           "the deleted pod leaving the kept facts")
        # Its rows leave the window (3 s) and no new ones come.
        deadline = time.monotonic() + 20
        while True:
            _, body = side.get("/api/v1/pod/%s/late" % metrics_ns, metricNames="cpu/usage")
            if not any(i["dataPoints"] for i in body["items"]):
                break
            assert time.monotonic() < deadline, body
            time.sleep(0.3)
        later = wait_health(side, lambda h: h["scrapes"] >= gone["scrapes"] + 2,
                            "two more scrapes")
        assert later["scrapes"] >= start["scrapes"] + 3
        assert later["podLists"] == 1, later
        assert later["podWatches"][0]["state"] == "synced" and later["failures"] == 0
    finally:
        side.stop()
        cluster.request("DELETE", "/api/v1/namespaces/%s/pods/late" % metrics_ns,
                        {"gracePeriodSeconds": 0})


def test_without_the_watch_verb_every_scrape_lists_the_pods(cluster, state_dir, metrics_ns):
    token, role = sidecar_identity(cluster, metrics_ns, name="no-watch", without=("watch",))
    side = new_sidecar(cluster, token, state_dir, "no-watch", resolution="1s", duration="30s")
    side.argv += ["--namespaces", metrics_ns]
    side.start()
    try:
        refused = wait_health(side, lambda h: h["podWatches"][0]["state"] == "unavailable",
                              "the refused watch")
        assert "403" in refused["podWatches"][0]["lastError"]
        first = wait_health(side, lambda h: h["scrapes"] >= refused["scrapes"] + 1,
                            "a scrape after the refusal")
        later = wait_health(side, lambda h: h["scrapes"] >= first["scrapes"] + 3,
                            "three more scrapes")
        assert later["podLists"] - first["podLists"] >= 2, (first, later)
        assert later["failures"] == 0 and later["podWatches"][0]["kept"] is None
        whole = requests_of(side, metrics_ns, "solo")
        assert whole["cpu/request"] == {350_000_000}             # 100m + 250000u
        assert whole["memory/limit"] == {(128 << 20) + (2 << 30)}
    finally:
        side.stop()
        cluster.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"
                        + role)
        cluster.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + role)
