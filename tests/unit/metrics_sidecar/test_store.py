"""The sidecar's SQLite store and the scrape-to-rows step, without a cluster."""

import asyncio

from metrics_sidecar.scraper import build
from metrics_sidecar.store import Scrape, Store


def run(coro):
    return asyncio.run(coro)


def pod_row(ns, name, container, cpu, memory, uid="u"):
    return (ns, name, uid, container, cpu, memory, 1, 2, 3, 4)


def test_series_sum_containers_per_scrape_and_cull_old_rows(tmp_path):
    store = Store(str(tmp_path / "m.db"), duration=10)

    async def scenario():
        await store.write(Scrape(nodes=[("n1", 100, 1000, 0, 0, 0, 0)],
                                 pods=[pod_row("a", "p", "c1", 5, 50),
                                       pod_row("a", "p", "c2", 7, 70),
                                       pod_row("a", "q", "c1", 1, 10)],
                                 claims=[("a", "data", "p")]), 100)
        await store.write(Scrape(nodes=[("n1", 200, 2000, 0, 0, 0, 0)],
                                 pods=[pod_row("a", "p", "c1", 6, 60)]), 105)
        pods = await store.pod_series("a", ["p", "q", "missing"], "cpu")
        one = await store.pod_series("a", ["p"], "memory", container="c2")
        every = await store.pod_series("a", None, "cpu")
        nodes = await store.node_series(None, "memory")
        claim = await store.claim_series("a", ["data"], "cpu")
        culled = await store.write(Scrape(pods=[pod_row("a", "p", "c1", 9, 90)]), 110)
        after = await store.pod_series("a", ["p", "q"], "cpu")
        stats = await store.stats()
        return pods, one, every, nodes, claim, culled, after, stats

    pods, one, every, nodes, claim, culled, after, stats = run(scenario())
    store.close()
    assert pods == {"p": [(100, 12), (105, 6)], "q": [(100, 1)]}
    assert one == {"p": [(100, 70)]}
    assert every == pods
    assert nodes == {"n1": [(100, 1000), (105, 2000)]}
    assert claim == {"data": [(100, 12)]}
    # At 110 with a 10 s window, the rows of 100 (3 pod rows, a node row, a claim) go.
    assert culled == 5
    assert after == {"p": [(105, 6), (110, 9)]}
    assert stats["pods"] == 2 and stats["nodes"] == 1 and stats["claims"] == 0


def test_in_memory_store_and_long_name_lists():
    store = Store(None, duration=60)
    names = ["p%04d" % i for i in range(1200)]  # more than one IN (...) chunk
    run(store.write(Scrape(pods=[pod_row("a", n, "c", i, i) for i, n in enumerate(names)]), 1))
    found = run(store.pod_series("a", names, "cpu"))
    store.close()
    assert len(found) == 1200 and found["p1199"] == [(1, 1199)]


def test_build_converts_quantities_and_joins_the_pods():
    pods = [{"metadata": {"namespace": "a", "name": "p", "uid": "uid-p"},
             "spec": {"nodeName": "n1", "containers": [
                 {"name": "c1", "resources": {"requests": {"cpu": "100m", "memory": "1Mi"},
                                              "limits": {"cpu": "1", "memory": "1Gi"}}},
                 {"name": "c2"}],
                 "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}},
                             {"name": "e", "emptyDir": {}}]}}]
    pod_metrics = [{"metadata": {"namespace": "a", "name": "p"},
                    "containers": [{"name": "c1", "usage": {"cpu": "5m", "memory": "2Ki"}},
                                   {"name": "c2", "usage": {"cpu": "10n", "memory": "3"}}]},
                   {"metadata": {"namespace": "a"}, "containers": []},        # malformed
                   {"metadata": {"namespace": "a", "name": "x"},
                    "containers": [{"name": "c", "usage": {"cpu": "bad"}}]}]  # malformed
    node_metrics = [{"metadata": {"name": "n1"}, "usage": {"cpu": "2", "memory": "1Gi"}},
                    {"metadata": {"name": "n2"}, "usage": "garbage"}]
    scrape = build(node_metrics, pod_metrics, pods)
    assert scrape.pods == [
        ("a", "p", "uid-p", "c1", 5_000_000, 2048, 100_000_000, 1_000_000_000, 1 << 20, 1 << 30),
        ("a", "p", "uid-p", "c2", 10, 3, 0, 0, 0, 0)]
    assert scrape.nodes == [("n1", 2_000_000_000, 1 << 30, 100_000_000, 1_000_000_000,
                             1 << 20, 1 << 30)]
    assert scrape.claims == [("a", "data", "p")]
