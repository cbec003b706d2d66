"""Where audit entries are kept: an SQL table, in an embedded SQLite file (sqlitestore.py) or
a shared PostgreSQL database (postgresstore.py). One class holds the SQL both speak; the
dialects differ only in their placeholders, key types and how a duplicate is ignored.

Every method is called from the trail's one thread (trail.py), never from the event loop: a
store is a plain blocking DB-API connection. Entries are written idempotently (their random
``id`` is unique), so a batch retried after an answer that was lost is stored once.

Reading is always one cluster's entries, newest first, filtered by user, namespace, kind and
time, and limited to the *scopes* the reader may see: (group, resource, namespace) of the
changed objects, and the namespaces of terminal sessions (visibility.py decides which with the
reader's own rights; ``namespace`` None in a scope: every namespace).
"""

from __future__ import annotations

import ujson

from dashboard_api.audit.entry import millis_of, rfc3339_ms

COLUMNS = ("id", "time", "cluster", "username", "verified", "user_source", "client", "route",
           "method", "kind", "api_group", "resource", "namespace", "name", "status", "reason",
           "message", "request_id", "details", "terminal")
TERMINAL_ROUTE = "terminal"
# A reader's scopes are checked one by one with the API server: past this many distinct ones
# in the entries asked for, the rest are not shown (the answer says so in its errors).
MAX_SCOPES = 1000


class Filters:
    """What ``GET /api/v1/audit`` asks for: ``user``, ``namespace``, ``kind`` (exact; kind
    without regard to case), ``since`` and ``until`` (Unix milliseconds; ``since``
    included, ``until`` not)."""

    __slots__ = ("user", "namespace", "kind", "since", "until")

    def __init__(self, user=None, namespace=None, kind=None, since=None, until=None):
        self.user, self.namespace, self.kind = user, namespace, kind
        self.since, self.until = since, until


class SqlStore:
    """The SQL of the table ``audit_entries``; subclasses connect (``connect``) and name their
    dialect (``PH``, the placeholder; ``SEQ``, the key's type; ``INSERT``, ignoring a
    duplicate ``id``)."""

    PH = "?"
    SEQ = "INTEGER PRIMARY KEY AUTOINCREMENT"
    MILLIS = "INTEGER"
    INSERT = "INSERT OR IGNORE INTO audit_entries (%s) VALUES (%s)"

    def __init__(self):
        self.db = None

    # --- the connection -----------------------------------------------------------------

    def connect(self):
        raise NotImplementedError

    def open(self):
        """Connects and makes the table and its indexes when missing."""
        self.db = self.connect()
        cur = self.db.cursor()
        cur.execute(
            "CREATE TABLE IF NOT EXISTS audit_entries (seq %s, id TEXT NOT NULL UNIQUE, "
            "time %s NOT NULL, cluster TEXT NOT NULL, username TEXT NOT NULL, "
            "verified INTEGER NOT NULL, user_source TEXT NOT NULL, client TEXT NOT NULL, "
            "route TEXT NOT NULL, method TEXT NOT NULL, kind TEXT NOT NULL, "
            "api_group TEXT NOT NULL, resource TEXT NOT NULL, namespace TEXT NOT NULL, "
            "name TEXT NOT NULL, status INTEGER NOT NULL, reason TEXT NOT NULL, "
            "message TEXT NOT NULL, request_id TEXT NOT NULL, details TEXT NOT NULL, "
            "terminal INTEGER NOT NULL)" % (self.SEQ, self.MILLIS))
        for name, columns in (("audit_by_time", "cluster, time"),
                              ("audit_by_namespace", "cluster, namespace, time"),
                              ("audit_by_user", "cluster, username, time")):
            cur.execute("CREATE INDEX IF NOT EXISTS %s ON audit_entries (%s)" % (name, columns))
        self.db.commit()

    def close(self):
        if self.db is not None:
            try:
                self.db.close()
            finally:
                self.db = None

    # --- writing ------------------------------------------------------------------------

    def insert(self, entries):
        rows = [_row(e) for e in entries]
        sql = self.INSERT % (", ".join(COLUMNS), ", ".join([self.PH] * len(COLUMNS)))
        cur = self.db.cursor()
        cur.executemany(sql, rows)
        self.db.commit()

    def prune(self, before, keep):
        """Deletes entries older than ``before`` (Unix seconds), then the oldest beyond
        ``keep`` entries; returns how many went."""
        cur = self.db.cursor()
        cur.execute("DELETE FROM audit_entries WHERE time < %s" % self.PH,
                    (int(before * 1000),))
        deleted = max(cur.rowcount, 0)
        cur.execute("SELECT COUNT(*) FROM audit_entries")
        count = cur.fetchone()[0]
        if count > keep:
            cur.execute("SELECT seq FROM audit_entries ORDER BY seq DESC LIMIT 1 OFFSET %s"
                        % self.PH, (keep - 1,))
            row = cur.fetchone()
            if row is not None:
                cur.execute("DELETE FROM audit_entries WHERE seq < %s" % self.PH, (row[0],))
                deleted += max(cur.rowcount, 0)
        self.db.commit()
        return deleted

    # --- reading ------------------------------------------------------------------------

    def _where(self, cluster, filters):
        clauses, args = ["cluster = %s" % self.PH], [cluster]
        if filters.user is not None:
            clauses.append("username = %s" % self.PH)
            args.append(filters.user)
        if filters.namespace is not None:
            clauses.append("namespace = %s" % self.PH)
            args.append(filters.namespace)
        if filters.kind is not None:
            clauses.append("LOWER(kind) = %s" % self.PH)
            args.append(filters.kind.lower())
        if filters.since is not None:
            clauses.append("time >= %s" % self.PH)
            args.append(int(filters.since))
        if filters.until is not None:
            clauses.append("time < %s" % self.PH)
            args.append(int(filters.until))
        return clauses, args

    def scopes(self, cluster, filters, limit=MAX_SCOPES):
        """The distinct (group, resource, namespace, terminal) of the entries asked for, at
        most ``limit`` + 1 of them (one more says there are too many)."""
        clauses, args = self._where(cluster, filters)
        cur = self.db.cursor()
        cur.execute("SELECT DISTINCT api_group, resource, namespace, terminal FROM audit_entries "
                    "WHERE %s LIMIT %d" % (" AND ".join(clauses), limit + 1), args)
        return [(g, r, ns, bool(t)) for g, r, ns, t in cur.fetchall()]

    def page(self, cluster, filters, allowed, offset, limit):
        """(how many entries the reader may see, those of the page asked for), newest first.
        ``allowed``: scopes (group, resource, namespace or None for all, terminal)."""
        if not allowed:
            return 0, []
        clauses, args = self._where(cluster, filters)
        ors = []
        for group, resource, namespace, terminal in allowed:
            clause = "(api_group = %s AND resource = %s AND terminal = %s" % (
                self.PH, self.PH, self.PH)
            args += [group, resource, 1 if terminal else 0]
            if namespace is not None:
                clause += " AND namespace = %s" % self.PH
                args.append(namespace)
            ors.append(clause + ")")
        where = " AND ".join(clauses) + " AND (" + " OR ".join(ors) + ")"
        cur = self.db.cursor()
        cur.execute("SELECT COUNT(*) FROM audit_entries WHERE " + where, args)
        total = cur.fetchone()[0]
        cur.execute("SELECT %s FROM audit_entries WHERE %s ORDER BY time DESC, seq DESC "
                    "LIMIT %d OFFSET %d" % (", ".join(COLUMNS), where, int(limit), int(offset)),
                    args)
        return total, [_entry(row) for row in cur.fetchall()]

    def count(self):
        cur = self.db.cursor()
        cur.execute("SELECT COUNT(*) FROM audit_entries")
        return cur.fetchone()[0]


def _row(entry):
    return (entry["id"], millis_of(entry["time"]), entry["cluster"], entry["user"],
            1 if entry["userVerified"] else 0, entry["userSource"], entry["client"],
            entry["route"], entry["method"], entry["kind"], entry["group"], entry["resource"],
            entry["namespace"], entry["name"], entry["status"], entry["reason"],
            entry["message"], entry["requestId"],
            ujson.dumps(entry.get("details") or {}, ensure_ascii=False),
            1 if entry["route"] == TERMINAL_ROUTE else 0)


def _entry(row):
    (id_, time_, cluster, user, verified, source, client, route, method, kind, group,
     resource, namespace, name, status, reason, message, request_id, details, _t) = row
    return {"id": id_, "time": rfc3339_ms(time_), "cluster": cluster, "user": user,
            "userVerified": bool(verified), "userSource": source, "client": client,
            "route": route, "method": method, "kind": kind, "group": group,
            "resource": resource, "namespace": namespace, "name": name, "status": int(status),
            "reason": reason, "message": message, "requestId": request_id,
            "details": ujson.loads(details) if details else {}}
