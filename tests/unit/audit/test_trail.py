"""The audit trail (audit/trail.py): an entry is logged at once and stored behind, a store
that refuses keeps entries waiting (counted, retried, written once it takes them), past the
bound entries are counted as dropped and stay in the log, the shutdown flushes and names what
is left, and reads of a store that cannot answer are a 503."""

import asyncio
import logging

import pytest

from dashboard_api.audit import entry
from dashboard_api.audit.sqlitestore import SqliteStore
from dashboard_api.audit.store import Filters
from dashboard_api.audit.trail import AuditCollector, AuditTrail, Retention
from dashboard_api.serving.errors import ApiError


class Flaky(SqliteStore):
    """A SQLite store that refuses while ``down``."""

    down = False

    def open(self):
        if self.down:
            raise OSError("connection refused")
        super().open()

    def insert(self, entries):
        if self.down:
            raise OSError("server closed the connection unexpectedly")
        super().insert(entries)


def one(i):
    return entry.make(1795852862.0 + i, "c", "u", True, "oidc", "x", "r", "PUT",
                      entry.Target("deployment", "apps", "deployments", "n", "w%d" % i), 200)


async def until(predicate, timeout=5.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not within %ss" % timeout
        await asyncio.sleep(0.02)


def metrics(trail):
    return {m.name: m.samples[0].value for m in AuditCollector(trail).collect()}


def test_an_outage_keeps_entries_waiting_then_writes_them(tmp_path, caplog):
    async def main():
        store = Flaky(str(tmp_path / "audit.db"))
        store.down = True
        trail = AuditTrail(store, Retention(86400, 1000), retry_min=0.05, retry_max=0.1)
        trail.start()
        with caplog.at_level(logging.INFO, logger="dashboard_api.audit"):
            trail.record([one(1), one(2)])
        lines = [r.getMessage() for r in caplog.records if r.name == "dashboard_api.audit"]
        assert len(lines) == 2 and '"name":"w1"' in lines[0]     # logged at once
        await until(lambda: trail.failures >= 2)
        seen = metrics(trail)
        assert seen["dashboard_audit_entries_pending"] == 2
        assert seen["dashboard_audit_store_up"] == 0
        assert seen["dashboard_audit_store_failures"] >= 2
        errors = [r for r in caplog.records if r.name == "dashboard_api.audit_trail"
                  and r.levelno == logging.ERROR]
        assert len(errors) == 1   # once per outage, not once per try
        with pytest.raises(ApiError) as refused:
            await trail.read(lambda s: s.count())
        assert refused.value.code == 503
        store.down = False
        await until(lambda: not trail.pending)
        assert trail.stored == 2 and metrics(trail)["dashboard_audit_store_up"] == 1
        assert await trail.read(lambda s: s.page("c", Filters(), [
            ("apps", "deployments", None, False)], 0, 10)[0]) == 2
        await trail.stop()
    asyncio.run(main())


def test_past_the_bound_entries_are_counted_not_kept(tmp_path, caplog):
    async def main():
        store = Flaky(str(tmp_path / "audit.db"))
        store.down = True
        trail = AuditTrail(store, Retention(86400, 1000), max_pending=3, retry_min=0.05)
        trail.start()
        trail.record([one(i) for i in range(5)])
        assert len(trail.pending) == 3 and trail.dropped == 2
        assert metrics(trail)["dashboard_audit_entries_dropped"] == 2
        await trail.stop(wait=0.2)
    with caplog.at_level(logging.INFO):
        asyncio.run(main())
    assert "3 audit entries were not written" in caplog.text


def test_stop_flushes_what_waits(tmp_path):
    async def main():
        trail = AuditTrail(SqliteStore(str(tmp_path / "audit.db")), Retention(86400, 1000))
        trail.record([one(i) for i in range(700)])   # more than one batch, never started
        await trail.stop()
        check = SqliteStore(str(tmp_path / "audit.db"))
        check.open()
        assert check.count() == 700
    asyncio.run(main())


def test_retention_prunes_when_the_trail_starts(tmp_path):
    async def main():
        store = SqliteStore(str(tmp_path / "audit.db"))
        store.open()
        store.insert([one(i) for i in range(10)])
        store.close()
        trail = AuditTrail(store, Retention(86400 * 3650, 4))
        trail.start()
        await until(lambda: trail.pruned == 6)
        await trail.stop()
    asyncio.run(main())
