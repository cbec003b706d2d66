"""The embedded store: one SQLite file (the default, ``--audit-db PATH``), kept across
restarts. Write-ahead logging, so a reader never waits for the writer; the file and its
folder are made private (0600, 0700) when the gateway creates them: entries name people and
objects."""

import os
import sqlite3

from dashboard_api.audit.store import SqlStore

BUSY_TIMEOUT_MS = 5000


class SqliteStore(SqlStore):
    def __init__(self, path):
        super().__init__()
        self.path = path

    def describe(self):
        return "SQLite " + self.path

    def connect(self):
        folder = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(folder):
            os.makedirs(folder, mode=0o700, exist_ok=True)
        if not os.path.exists(self.path):
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000.0)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA busy_timeout=%d" % BUSY_TIMEOUT_MS)
        return db
