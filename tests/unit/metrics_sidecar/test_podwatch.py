"""The sidecar's pod facts and pod watch without a cluster: the decoding, and the reflector's
loop against scripted LIST pages and watch streams (a 410 and a refused watch cannot be made
to happen on demand on the real API server; tests/metrics/test_pod_watch.py has the rest)."""

import asyncio
import json
import threading

from metrics_sidecar import podfacts, podwatch
from metrics_sidecar.api import ScrapeError
from metrics_sidecar.scraper import build, pod_usage


def pod(name, uid, cpu="100m", node="n1", claim=None, version="1", ns="a"):
    spec = {"nodeName": node, "containers": [
        {"name": "app", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": "1Mi"},
                                                    "limits": {"cpu": "1", "memory": "bad"}}},
        {"name": "side", "ports": [{"containerPort": 80}]}],
        "volumes": [{"name": "e", "emptyDir": {}}]}
    if claim:
        spec["volumes"].append({"name": "d", "persistentVolumeClaim": {"claimName": claim}})
    return {"metadata": {"namespace": ns, "name": name, "uid": uid, "resourceVersion": version,
                         "labels": {"app": name}, "managedFields": [{"manager": "m"}]},
            "spec": spec, "status": {"phase": "Running"}}


def page(items, version="10", next_=None):
    meta = {"resourceVersion": version}
    if next_:
        meta["continue"] = next_
    return json.dumps({"kind": "PodList", "metadata": meta, "items": items}).encode()


def line(kind, obj):
    return (json.dumps({"type": kind, "object": obj}) + "\n").encode()


def test_a_list_page_and_a_decoded_pod_give_the_same_facts():
    a, b = pod("p", "u1", claim="data"), pod("q", "u2")
    listed = podfacts._page("/api/v1/pods", page([a, b])).facts
    assert listed == [podfacts.pod_facts(a), podfacts.pod_facts(b)]
    p, q = listed
    assert p == ("a", "p", "u1", "n1", {"app": (100_000_000, 1_000_000_000, 1 << 20, 0),
                                        "side": (0, 0, 0, 0)}, ("data",))
    assert q[5] == ()
    # Pods of one template share one container table.
    assert p[4] is q[4]
    metrics = [{"metadata": {"namespace": "a", "name": "p"},
                "containers": [{"name": "app", "usage": {"cpu": "1m", "memory": "1Ki"}}]},
               {"metadata": {"namespace": "a", "name": "q"}, "containers": [{"usage": {}}]}]
    scrape = build([{"metadata": {"name": "n1"}, "usage": {"cpu": "1", "memory": "1"}}],
                   metrics, listed)
    assert scrape.pods == [("a", "p", "u1", "app", 1_000_000, 1024, 100_000_000, 1_000_000_000,
                            1 << 20, 0)]
    assert scrape.claims == [("a", "data", "p")]
    # Both pods on n1: the node's requests and limits are their sums.
    assert scrape.nodes == [("n1", 1_000_000_000, 1, 200_000_000, 2_000_000_000, 2 << 20, 0)]
    # What the scraper's decoding threads keep of each PodMetrics item joins the same way.
    usage = [pod_usage(m) for m in metrics]
    assert usage[1] is None and build([], usage, listed).pods == scrape.pods


def test_a_relisted_page_reuses_the_unchanged_tuples():
    kept = podfacts._page("/p", page([pod("p", "u1"), pod("q", "u2")])).facts
    by_uid = {f[2]: f for f in kept}
    again = podfacts._page("/p", page([pod("p", "u1"), pod("q", "u2", cpu="2")]),
                           reuse=by_uid).facts
    assert again[0] is by_uid["u1"]
    assert again[1] is not by_uid["u2"] and again[1][4]["app"][0] == 2_000_000_000


class FakeStream:
    """A watch response: the scripted chunks (after ``gate`` is set, when given), then
    (``hold``) a read that blocks until ``shutdown`` (as urllib3's does across threads)."""

    def __init__(self, chunks, hold=False, gate=None):
        self.chunks = chunks
        self.hold = hold
        self.gate = gate
        self.aborted = threading.Event()

    def stream(self, size):
        if self.gate is not None:
            self.gate.wait(10)
        yield from self.chunks
        if self.hold:
            self.aborted.wait(10)
            raise OSError("aborted")

    def shutdown(self):
        self.aborted.set()

    def close(self):
        pass

    def release_conn(self):
        pass


class FakeApi:
    """The sidecar's Api as the pod watch uses it: ``lists`` are the scripted LIST bodies (one
    page each), ``watches`` the scripted watch answers (a FakeStream or a ScrapeError)."""

    def __init__(self, lists, watches):
        self.lists = list(lists)
        self.watches = list(watches)
        self.pod_lists = 0
        self.watch_params = []
        self.watch_idle = 90.0

    async def fetch(self, path, params, decode):
        return decode(path, self.lists.pop(0))

    def open_stream(self, path, params, read_timeout):
        self.watch_params.append(dict(params))
        answer = self.watches.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def until(predicate, what, seconds=10):
    for _ in range(int(seconds / 0.01)):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within %ss: %s" % (seconds, what))


def started(api):
    """A started watch, made in the running loop as the sidecar makes it (on Python 3.9 an
    asyncio.Event binds the loop current when it is made)."""
    watch = podwatch.PodWatch(api)
    watch.start()
    return watch


def test_events_bookmarks_a_resumed_watch_and_a_410_that_lists_again():
    p, q, r, s = pod("p", "u1"), pod("q", "u2"), pod("r", "u3"), pod("s", "u4")
    first = FakeStream([line("ADDED", r)[:20], line("ADDED", r)[20:]           # split mid-line
                        + line("MODIFIED", dict(q, metadata=dict(q["metadata"],
                                                                 resourceVersion="12"),
                                                spec=dict(q["spec"], nodeName="n2"))),
                        line("DELETED", dict(p, metadata=dict(p["metadata"],
                                                              resourceVersion="13")))
                        + line("BOOKMARK", {"metadata": {"resourceVersion": "20"}})])
    gate = threading.Event()
    second = FakeStream([line("ERROR", {"kind": "Status", "code": 410, "metadata": {}})],
                        gate=gate)
    third = FakeStream([], hold=True)
    api = FakeApi([page([p, q], "10"), page([q, s], "30")], [first, second, third])

    async def scenario():
        watch = started(api)
        await until(lambda: len(api.watch_params) == 2, "the second watch")
        watched = {f[1]: f[3] for f in watch.kept()}
        gate.set()
        await until(lambda: len(api.watch_params) == 3, "the third watch")
        relisted = sorted(f[1] for f in watch.kept())
        watch.stop()
        return watch, watched, relisted

    watch, watched, relisted = asyncio.run(scenario())
    # LIST at 10, watch from 10: r added, q moved to n2, p deleted. That watch ends after its
    # bookmark: resumed from 20 without a LIST. Its ERROR (410) makes a second LIST (at 30),
    # watched from there.
    assert watched == {"q": "n2", "r": "n1"}
    assert [w["resourceVersion"] for w in api.watch_params] == ["10", "20", "30"]
    assert all(w["allowWatchBookmarks"] == "true" and w["fieldSelector"] == podfacts.NOT_DONE
               for w in api.watch_params)
    assert api.pod_lists == 2 and watch.lists == 2 and watch.relists == 1
    assert watch.events == 3 and relisted == ["q", "s"]
    assert watch.status()["state"] == "synced" and watch.status()["kept"] == 2


def test_the_kept_facts_answer_during_a_relist():
    class SlowApi(FakeApi):
        async def fetch(self, path, params, decode):
            if self.pod_lists == 2:   # the re-list waits for the test
                await self.gate.wait()
            return await super().fetch(path, params, decode)

    api = SlowApi([page([pod("p", "u1")], "10"), page([pod("q", "u2")], "30")],
                  [FakeStream([line("ERROR", {"kind": "Status", "code": 410})]),
                   FakeStream([], hold=True)])

    async def scenario():
        api.gate = asyncio.Event()
        watch = started(api)
        await until(lambda: api.pod_lists == 2, "the re-list")
        during = [f[1] for f in watch.kept()]
        api.gate.set()
        await until(lambda: watch.relists == 1, "the re-list's end")
        after = [f[1] for f in watch.kept()]
        watch.stop()
        return during, after

    during, after = asyncio.run(scenario())
    assert during == ["p"] and after == ["q"]


def test_a_refused_watch_drops_the_facts_and_scrapes_list():
    api = FakeApi([page([pod("p", "u1")], "10")],
                  [ScrapeError("GET /api/v1/pods answered 403: forbidden", 403)])

    async def scenario():
        watch = started(api)
        await until(lambda: watch.state == "unavailable", "the refusal")
        kept = watch.kept()
        watch.stop()
        return watch, kept

    watch, kept = asyncio.run(scenario())
    assert kept is None
    assert watch.settled.is_set() and "403" in watch.status()["lastError"]


def test_a_410_status_of_the_watch_lists_again_and_other_errors_resume():
    api = FakeApi([page([pod("p", "u1")], "10"), page([pod("p", "u1")], "40")],
                  [ScrapeError("GET failed: connection refused"),
                   ScrapeError("GET answered 410: too old", 410),
                   FakeStream([], hold=True)])
    podwatch.MIN_BACKOFF, saved = 0.01, podwatch.MIN_BACKOFF
    try:
        async def scenario():
            watch = started(api)
            await until(lambda: len(api.watch_params) == 3, "the third watch")
            watch.stop()
            return watch
        watch = asyncio.run(scenario())
    finally:
        podwatch.MIN_BACKOFF = saved
    # The refused connection resumes from the same version; the 410 lists again.
    assert [w["resourceVersion"] for w in api.watch_params] == ["10", "10", "40"]
    assert api.pod_lists == 2 and watch.relists == 1 and watch.restarts == 2
