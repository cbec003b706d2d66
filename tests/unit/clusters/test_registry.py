"""The clusters served (clusters/registry.py): following the kubeconfig file (a context added
appears, one removed disappears with its terminals closed, one changed is rebuilt), the
default cluster never removed nor let go, the idle reaper, and use() starting a cluster again.

Pure logic: a fake API client per cluster and a fake watch cache (no API server)."""

import asyncio
import time

import pytest

from dashboard_api.app import options
from dashboard_api.clusters import context as cluster_context, sources
from dashboard_api.clusters.registry import Clusters
from tests.unit.clusters.test_sources import kubeconfig

SECRET = b"k" * 32
WAIT = 5.0  # the most a test waits for the registry's own tasks


class FakeApi:
    def __init__(self, config):
        self.config = config
        self.down = False

    def shutdown(self):
        self.down = True


class FakeCache:
    def __init__(self):
        self.started = self.stopped = False
        self.registered = asyncio.Event()

    async def start(self):
        self.started = True
        self.registered.set()

    def stop(self):
        self.stopped = True

    def synced(self):
        return True


class FakeSource:
    access = None


class FakeTerminal:
    def __init__(self):
        self.closed = None

    def close_with_toast(self, message):
        self.closed = message


@pytest.fixture(autouse=True)
def fake_caches(monkeypatch):
    """Every cluster built gets a FakeCache (in ``built``, in order)."""
    built = []

    def make_source(_options, _api, _settings):
        built.append(FakeCache())
        return built[-1], FakeSource()

    monkeypatch.setattr(cluster_context, "make_source", make_source)
    monkeypatch.setattr(cluster_context, "make_pipeline", lambda *a, **k: object())
    return built


def registry(path, *argv):
    opts = options.parse(["--kubeconfig", str(path), "--metrics-provider", "none",
                          "--cluster-config-poll", "0", "--cluster-idle-timeout", "0", *argv])
    clusters = Clusters(opts, FakeApi, SECRET)
    clusters.load()
    return clusters


async def reread(clusters):
    entries, default = sources.read(clusters.options)
    await clusters._apply(entries, default, asyncio.get_running_loop())


async def until(condition, what):
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "not within %gs: %s" % (WAIT, what)
        await asyncio.sleep(0.01)


def names(clusters):
    return sorted(c.name for c in clusters)


def test_load_builds_every_context_the_current_one_default(tmp_path):
    async def scenario():
        clusters = registry(kubeconfig(tmp_path / "k", ["a", "b"], current="b"))
        assert names(clusters) == ["a", "b"] and clusters.default.name == "b"
        assert clusters.default.default and not clusters.by_name["a"].default
        assert clusters.get(None) is clusters.default and clusters.get("nope") is None
        assert clusters.by_name["a"].api.config.host == "https://127.0.0.1:6443"
        clusters.stop()
    asyncio.run(scenario())


def test_get_starts_a_cluster_on_first_use_only(tmp_path, fake_caches):
    async def scenario():
        clusters = registry(kubeconfig(tmp_path / "k", ["a", "b"], current="a"))
        b = clusters.by_name["b"]
        assert not b.started and b.cache_state() == "stopped"
        assert clusters.get("b") is b
        await until(lambda: b.cache.started, "b's cache started")
        assert b.cache_state() == "synced"
        first = b.cache
        clusters.get("b")
        await asyncio.sleep(0)
        assert b.cache is first and len(fake_caches) == 2  # no second cache
        clusters.stop()
    asyncio.run(scenario())


def test_a_context_added_to_the_file_appears(tmp_path):
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a"], current="a"))
        kubeconfig(path, ["a", "new"], current="a")
        before = clusters.by_name["a"]
        await reread(clusters)
        assert names(clusters) == ["a", "new"]
        assert clusters.by_name["a"] is before  # unchanged: kept as it is
        assert not clusters.by_name["new"].default and not clusters.by_name["new"].started
        clusters.stop()
    asyncio.run(scenario())


def test_a_context_removed_disappears_its_terminals_closed(tmp_path):
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a", "gone"], current="a"))
        gone = clusters.get("gone")
        await until(lambda: gone.cache.started, "gone's cache started")
        shell = FakeTerminal()
        gone.terminals.running[shell] = "caller"
        kubeconfig(path, ["a"], current="a")
        await reread(clusters)
        assert names(clusters) == ["a"] and clusters.get("gone") is None
        assert shell.closed == "This cluster is no longer served here."
        assert gone.cache.stopped and gone.api.down
        clusters.stop()
    asyncio.run(scenario())


def test_a_changed_context_is_rebuilt(tmp_path):
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a", "b"], current="a"))
        old = clusters.get("b")
        await until(lambda: old.cache.started, "b's cache started")
        kubeconfig(path, ["a", "b"], current="a", servers={"b": "https://10.0.0.2:6443"})
        await reread(clusters)
        new = clusters.by_name["b"]
        assert new is not old and new.fingerprint != old.fingerprint
        assert new.api.config.host == "https://10.0.0.2:6443"
        assert old.api.down and old.cache.stopped
        assert not new.started  # starts on its next use
        clusters.stop()
    asyncio.run(scenario())


def test_the_default_cluster_is_never_removed_nor_rebuilt(tmp_path):
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a", "b"], current="a"))
        default = clusters.default
        kubeconfig(path, ["b"], current="b")
        await reread(clusters)
        assert clusters.default is default and names(clusters) == ["a", "b"]
        kubeconfig(path, ["a", "b"], current="a", servers={"a": "https://10.0.0.3:6443"})
        await reread(clusters)
        assert clusters.default is default and not default.api.down
        clusters.stop()
    asyncio.run(scenario())


def test_an_unreadable_file_keeps_the_clusters_served(tmp_path):
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a", "b"], current="a"), "--cluster-config-poll",
                            "20ms")
        clusters.start_upkeep()
        path.write_text("contexts: [\n")
        await asyncio.sleep(0.1)
        assert names(clusters) == ["a", "b"]
        kubeconfig(path, ["a", "b", "c"], current="a")  # readable again: followed again
        await until(lambda: "c" in clusters.by_name, "c added by the poll")
        clusters.stop()
    asyncio.run(scenario())


def test_the_poll_follows_the_file(tmp_path):
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a", "b"], current="a"), "--cluster-config-poll",
                            "20ms")
        clusters.start_upkeep()
        kubeconfig(path, ["a", "c"], current="a")
        await until(lambda: names(clusters) == ["a", "c"], "b removed and c added by the poll")
        clusters.stop()
    asyncio.run(scenario())


def test_the_reaper_sleeps_an_idle_cluster_and_use_starts_it_again(tmp_path, fake_caches):
    async def scenario():
        clusters = registry(kubeconfig(tmp_path / "k", ["a", "idle", "shell"], current="a"),
                            "--cluster-idle-timeout", "50ms")
        default = clusters.default
        await default.start()
        idle, shell = clusters.get("idle"), clusters.get("shell")
        await until(lambda: idle.cache.started and shell.cache.started, "caches started")
        shell.terminals.running[FakeTerminal()] = "caller"
        first = idle.cache
        clusters.start_upkeep()
        await until(lambda: not idle.started, "the idle cluster let go")
        assert first.stopped and idle.cache is not first and idle.cache_state() == "stopped"
        assert not idle.api.down  # let go, not removed: its client stays
        assert shell.started and not shell.cache.stopped  # a terminal runs there
        assert default.started and not default.cache.stopped  # the default: never
        assert clusters.get("idle") is idle
        await until(lambda: idle.cache.started, "started again on use")
        assert idle.cache_state() == "synced"
        clusters.stop()
    asyncio.run(scenario())


def test_sleep_and_stop(tmp_path):
    async def scenario():
        clusters = registry(kubeconfig(tmp_path / "k", ["a", "b"], current="a"))
        b = clusters.by_name["b"]
        assert b.sleep() is False  # never started: nothing to let go
        clusters.get("b")
        await until(lambda: b.cache.started, "b started")
        assert b.sleep() is True and not b.started
        clusters.stop()
        assert all(c.api.down for c in clusters)
    asyncio.run(scenario())


def test_stopping_a_cluster_started_by_await_never_cancels_the_caller(tmp_path):
    # The start-up awaits the default cluster's start() and, at the end of the shutdown, stops
    # every cluster: that must not cancel the start-up's own task (its exit status).
    async def scenario():
        clusters = registry(kubeconfig(tmp_path / "k", ["a"], current="a"))
        await clusters.default.start()
        assert clusters.default.cache.started
        clusters.stop()
        await asyncio.sleep(0)
        return "finished"
    assert asyncio.run(scenario()) == "finished"


class FakeChannel:
    """A browser connected to a cluster's notices (live/)."""

    def __init__(self, hub):
        self.hub = hub
        self.subscriptions = {}
        self.closes = []
        hub.channels.add(self)

    def close(self, code, reason):
        self.closes.append((code, reason))
        self.hub.leave(self)


def test_a_watched_cluster_is_kept_and_its_notices_end_with_it(tmp_path):
    """A browser told of a cluster's changes keeps it (as a running terminal does); a cluster
    removed from the file closes its notices' connections, saying why."""
    async def scenario():
        path = tmp_path / "k"
        clusters = registry(kubeconfig(path, ["a", "b"], current="a"))
        b = clusters.get("b")
        await until(lambda: b.cache.started, "b started")
        browser = FakeChannel(b.live)
        assert b.sleep() is False and b.started
        kubeconfig(path, ["a"], current="a")
        await reread(clusters)
        assert browser.closes == [(4410, "this cluster is no longer served here")]
        assert not b.live.active
        clusters.stop()
    asyncio.run(scenario())
