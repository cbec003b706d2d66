"""The shared store: a PostgreSQL database (``--audit-db postgresql://...``) that every replica
writes to and reads from, so each sees the whole trail.

The URL is libpq's (psycopg 3 connects through libpq): every option it knows works in its query,
TLS above all (``?sslmode=verify-full&sslrootcert=/etc/...``); a password is better kept out of
the flags, in ``PGPASSWORD`` or a ``passfile``. The gateway bounds every wait on the server
unless the URL says otherwise: ``connect_timeout`` 5 s, ``tcp_user_timeout`` 10 s (a server
gone silent), and a 10 s ``statement_timeout``; the trail's thread is never held longer, and
the change the entry records never waits for it at all (trail.py). The table is made when
missing; what is logged of the URL never shows a password.
"""

import urllib.parse

import psycopg
from psycopg import conninfo

from dashboard_api.audit.store import SqlStore

DEFAULTS = {"connect_timeout": "5", "tcp_user_timeout": "10000",
            "application_name": "dashboard-api"}
STATEMENT_TIMEOUT_MS = 10000


def shown(url):
    """The URL as the log may show it: without its password."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = urllib.parse.quote(parts.username or "", safe="")
    return urllib.parse.urlunsplit((parts.scheme, "%s@%s" % (user, netloc), parts.path,
                                    parts.query, ""))


class PostgresStore(SqlStore):
    PH = "%s"
    SEQ = "BIGSERIAL PRIMARY KEY"
    MILLIS = "BIGINT"
    INSERT = "INSERT INTO audit_entries (%s) VALUES (%s) ON CONFLICT (id) DO NOTHING"

    def __init__(self, url):
        super().__init__()
        self.url = url
        given = conninfo.conninfo_to_dict(url)   # raises ProgrammingError when malformed
        self._extra = {k: v for k, v in DEFAULTS.items() if k not in given}

    def describe(self):
        return "PostgreSQL " + shown(self.url)

    def connect(self):
        db = psycopg.connect(self.url, **self._extra)
        with db.cursor() as cur:
            cur.execute("SET statement_timeout = %d" % STATEMENT_TIMEOUT_MS)
        db.commit()
        return db
