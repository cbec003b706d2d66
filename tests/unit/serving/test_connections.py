"""serving/connections.harden_headers: every response says nosniff, and the wrapper kept on
the connection makes no reference cycle (issue #30: a cycle a request left only the collector
freed, with the whole request, and young collections under load paused every request)."""

import gc
import weakref

from dashboard_api.serving.connections import harden_headers


class Connection:
    """What harden_headers wraps of Tornado's HTTP1Connection: its write_headers method."""

    def __init__(self):
        self.written = []

    def write_headers(self, start_line, headers, chunk=None):
        self.written.append((start_line, dict(headers), chunk))
        return "written"


def test_nosniff_is_added_unless_present():
    conn = Connection()
    harden_headers(conn)
    assert conn.write_headers("200", {"Content-Type": "a"}) == "written"
    assert conn.write_headers("404", {"X-Content-Type-Options": "nosniff"}, b"body") == "written"
    assert conn.written == [("200", {"Content-Type": "a", "X-Content-Type-Options": "nosniff"},
                             None),
                            ("404", {"X-Content-Type-Options": "nosniff"}, b"body")]


def test_a_hardened_connection_is_freed_by_its_reference_count():
    conn = Connection()
    harden_headers(conn)
    gone = weakref.ref(conn)
    gc.disable()
    try:
        del conn
        assert gone() is None
    finally:
        gc.enable()
