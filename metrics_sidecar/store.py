"""The sidecar's rows in SQLite (the standard library's sqlite3), owned by one worker thread.

Every statement runs in that thread (a connection must stay in the thread that made it, and
SQLite serialises writers anyway); the event loop only awaits the results. ``--db-file`` unset
means an in-memory database, lost on restart.

Tables (times are whole Unix seconds of the scrape; cpu in nanocores, memory in bytes):

  nodes(name, time, cpu, memory, cpu_request, cpu_limit, memory_request, memory_limit)
  pods(namespace, name, uid, container, time, cpu, memory, cpu_request, ...)   one row per
       container of a pod that the metrics API reported
  claims(namespace, claim, pod, time)   which pod mounted which persistent volume claim

A write puts one scrape in one transaction and then culls every row at or older than
``time - duration``, so the window never grows past ``--metric-duration``.
"""

import asyncio
import concurrent.futures
import os
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes(name TEXT NOT NULL, time INTEGER NOT NULL, cpu INTEGER,
    memory INTEGER, cpu_request INTEGER, cpu_limit INTEGER, memory_request INTEGER,
    memory_limit INTEGER);
CREATE INDEX IF NOT EXISTS nodes_by_name ON nodes(name, time);
CREATE INDEX IF NOT EXISTS nodes_by_time ON nodes(time);
CREATE TABLE IF NOT EXISTS pods(namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT,
    container TEXT NOT NULL, time INTEGER NOT NULL, cpu INTEGER, memory INTEGER,
    cpu_request INTEGER, cpu_limit INTEGER, memory_request INTEGER, memory_limit INTEGER);
CREATE INDEX IF NOT EXISTS pods_by_name ON pods(namespace, name, time);
CREATE INDEX IF NOT EXISTS pods_by_time ON pods(time);
CREATE TABLE IF NOT EXISTS claims(namespace TEXT NOT NULL, claim TEXT NOT NULL,
    pod TEXT NOT NULL, time INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS claims_by_name ON claims(namespace, claim, time);
CREATE INDEX IF NOT EXISTS claims_by_time ON claims(time);
"""
RESOURCE_COLUMNS = ("cpu", "memory", "cpu_request", "cpu_limit", "memory_request",
                    "memory_limit")
MAX_PARAMS = 500   # names per IN (...) clause, well under SQLite's variable limit


class Scrape:
    """What one scrape read. ``nodes``: [(name, cpu, memory, cpu_req, cpu_lim, mem_req,
    mem_lim)]; ``pods``: [(namespace, name, uid, container, cpu, memory, cpu_req, ...)];
    ``claims``: [(namespace, claim, pod)]."""

    def __init__(self, nodes=(), pods=(), claims=()):
        self.nodes = list(nodes)
        self.pods = list(pods)
        self.claims = list(claims)


class Store:
    def __init__(self, path=None, duration=900):
        self.path = path
        self.duration = int(duration)
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sqlite")
        self._db = None
        self._run(self._open).result()

    # -- the worker thread ------------------------------------------------------------------

    def _open(self):
        self._db = sqlite3.connect(self.path or ":memory:")
        self._db.executescript(SCHEMA)
        if self.path:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.commit()

    def _run(self, fn, *args):
        return self._pool.submit(fn, *args)

    async def _call(self, fn, *args):
        return await asyncio.wrap_future(self._run(fn, *args))

    def _write(self, scrape, now):
        db = self._db
        # Rows are made as SQLite takes them (generators): at 150,000 pods a second list of
        # the scrape's rows would be ~50 MB more at the peak.
        with db:  # one transaction: a scrape is stored whole or not at all
            db.executemany("INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           ((n[0], now) + tuple(n[1:]) for n in scrape.nodes))
            db.executemany("INSERT INTO pods VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (tuple(p[:4]) + (now,) + tuple(p[4:]) for p in scrape.pods))
            db.executemany("INSERT INTO claims VALUES (?, ?, ?, ?)",
                           (tuple(c) + (now,) for c in scrape.claims))
        return self._cull(now)

    def _cull(self, now):
        cutoff = now - self.duration
        with self._db as db:
            return sum(db.execute("DELETE FROM %s WHERE time <= ?" % table, (cutoff,)).rowcount
                       for table in ("nodes", "pods", "claims"))

    def _select(self, sql, args):
        return self._db.execute(sql, args).fetchall()

    def _in_chunks(self, sql, head, names, tail=()):
        """Runs ``sql`` (with one ``{}`` for the IN list) per chunk of ``names``."""
        rows = []
        names = list(names)
        for i in range(0, len(names), MAX_PARAMS):
            chunk = names[i:i + MAX_PARAMS]
            rows.extend(self._db.execute(sql.format(",".join("?" * len(chunk))),
                                         tuple(head) + tuple(chunk) + tuple(tail)).fetchall())
        return rows

    def _pod_series(self, namespace, names, column, container):
        where, tail = "", ()
        if container is not None:
            where, tail = " AND container = ?", (container,)
        base = "SELECT name, time, SUM(%s) FROM pods WHERE namespace = ?" % column
        group = " GROUP BY name, time ORDER BY name, time"
        if names is None:
            return self._select(base + where + group, (namespace,) + tail)
        return self._in_chunks(base + " AND name IN ({})" + where + group, (namespace,), names,
                               tail)

    def _node_series(self, names, column):
        base = "SELECT name, time, SUM(%s) FROM nodes" % column
        group = " GROUP BY name, time ORDER BY name, time"
        if names is None:
            return self._select(base + group, ())
        return self._in_chunks(base + " WHERE name IN ({})" + group, (), names)

    def _claim_series(self, namespace, names, column):
        sql = ("SELECT c.claim, c.time, SUM(p.%s) FROM claims c JOIN pods p ON "
               "p.namespace = c.namespace AND p.name = c.pod AND p.time = c.time "
               "WHERE c.namespace = ? AND c.claim IN ({}) GROUP BY c.claim, c.time "
               "ORDER BY c.claim, c.time" % column)
        return self._in_chunks(sql, (namespace,), names)

    def _pod_uids(self, namespace, names):
        rows = self._in_chunks("SELECT DISTINCT name, uid FROM pods WHERE namespace = ? AND "
                               "name IN ({})", (namespace,), names)
        out = {}
        for name, uid in rows:
            out.setdefault(name, set()).add(uid)
        return out

    def _pod_names(self, namespace):
        return [r[0] for r in self._select(
            "SELECT DISTINCT name FROM pods WHERE namespace = ? ORDER BY name", (namespace,))]

    def _stats(self):
        counts = {t: self._db.execute("SELECT COUNT(*) FROM %s" % t).fetchone()[0]
                  for t in ("nodes", "pods", "claims")}
        page_size = self._db.execute("PRAGMA page_size").fetchone()[0]
        pages = self._db.execute("PRAGMA page_count").fetchone()[0]
        counts["bytes"] = page_size * pages
        if self.path and os.path.exists(self.path):
            counts["file_bytes"] = os.path.getsize(self.path)
        return counts

    def _close(self):
        if self._db is not None:
            self._db.close()
            self._db = None

    # -- the event loop's side --------------------------------------------------------------

    async def write(self, scrape, now):
        """Stores one scrape taken at ``now`` (Unix seconds) and culls; rows culled."""
        return await self._call(self._write, scrape, int(now))

    async def cull(self, now):
        return await self._call(self._cull, int(now))

    async def pod_series(self, namespace, names, column, container=None):
        """{pod name: [(time, value)]}: per scrape, the sum over the pod's containers (or the
        one ``container``); ``names`` None means every pod of the namespace."""
        return _grouped(await self._call(self._pod_series, namespace, names, column, container))

    async def node_series(self, names, column):
        """{node name: [(time, value)]}; ``names`` None means every node."""
        return _grouped(await self._call(self._node_series, names, column))

    async def claim_series(self, namespace, names, column):
        """{claim: [(time, value)]}: per scrape, the sum over the pods that mounted it."""
        return _grouped(await self._call(self._claim_series, namespace, names, column))

    async def pod_uids(self, namespace, names):
        """{pod name: {uids stored under that name}}."""
        return await self._call(self._pod_uids, namespace, names)

    async def pod_names(self, namespace):
        return await self._call(self._pod_names, namespace)

    async def stats(self):
        return await self._call(self._stats)

    def close(self):
        self._run(self._close).result()
        self._pool.shutdown(wait=True)


def _grouped(rows):
    out = {}
    for name, time, value in rows:
        out.setdefault(name, []).append((time, value if value is not None else 0))
    return out
