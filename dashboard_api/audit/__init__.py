"""The audit trail (issue #39): who changed what through the gateway, and how it went.

One idea per module: ``entry`` (the fields of an entry, times, the JSON line), ``targets``
(which object a write route changes), ``store`` (the SQL of the table, both dialects),
``sqlitestore`` (the embedded file, the default) and ``postgresstore`` (a database shared by
replicas), ``trail`` (the log line at once, the store behind, never in the way of the change;
outages buffered; pruning; the /metrics series), ``visibility`` (which entries a reader may
see, asked of the cluster with their own rights). What records entries: the request log's
audit seam for every write route (serving/requestlog.py, handlers/base.py) and the terminal
sessions (clusters/context.py). The route is handlers/audit.py.

``make(options)`` returns the AuditTrail of ``--audit-db`` (None with ``--audit-db none``:
the entries then go to the log only).
"""

import os

from dashboard_api.audit.sqlitestore import SqliteStore
from dashboard_api.audit.trail import AuditTrail, Retention

NONE = "none"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class AuditConfigError(ValueError):
    """--audit-db or --audit-retention cannot work (said at start-up)."""


def default_path():
    """``audit.db`` in systemd's ``$STATE_DIRECTORY`` (a unit's StateDirectory=), else in
    ``$XDG_STATE_HOME/dashboard-api`` (``~/.local/state/dashboard-api`` without it)."""
    systemd = (os.environ.get("STATE_DIRECTORY") or "").split(":")[0]
    if systemd:
        return os.path.join(systemd, "audit.db")
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                            "state")
    return os.path.join(state, "dashboard-api", "audit.db")


def store_of(target):
    """The store ``--audit-db`` names: a PostgreSQL URL, or a file path (SQLite).
    AuditConfigError for a URL libpq cannot read."""
    if target.startswith(POSTGRES_SCHEMES):
        # Here, not at the top: only a gateway configured for PostgreSQL loads its driver.
        from dashboard_api.audit.postgresstore import PostgresStore
        try:
            return PostgresStore(target)
        except Exception as exc:  # psycopg.ProgrammingError: never repeat the URL (a password)
            raise AuditConfigError("--audit-db: not a PostgreSQL URL libpq can read (%s)"
                                   % type(exc).__name__) from None
    return SqliteStore(target)


def make(options):
    target = getattr(options, "audit_db", None) or default_path()
    if target == NONE:
        return None
    age, entries = options.audit_retention
    return AuditTrail(store_of(target), Retention(age, entries))
