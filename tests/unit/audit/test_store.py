"""The SQL of the audit store (audit/store.py) on a real SQLite file: idempotent writes, one
cluster's entries newest first, the filters, the scopes a reader is asked about and those they
may see, pruning by age and number. tests/audit/ runs the same SQL against PostgreSQL."""

import os
import stat

from dashboard_api.audit import entry
from dashboard_api.audit.sqlitestore import SqliteStore
from dashboard_api.audit.store import Filters

BASE = 1795852862.0


def made(seconds, cluster="a", user="alice", kind="deployment", group="apps",
         resource="deployments", namespace="ns1", name="web", route="scale-namespaced"):
    return entry.make(BASE + seconds, cluster, user, True, "oidc", "127.0.0.1", route, "PUT",
                      entry.Target(kind, group, resource, namespace, name), 200, "", "",
                      "rid-%s" % seconds)


def opened(tmp_path):
    store = SqliteStore(str(tmp_path / "state" / "audit.db"))
    store.open()
    return store


EVERYTHING = [("apps", "deployments", None, False), ("", "pods", None, True),
              ("", "nodes", None, False), ("", "", None, False)]


def test_the_file_is_private_and_writes_are_idempotent(tmp_path):
    store = opened(tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / "state" / "audit.db").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "state").st_mode) == 0o700
    first = made(1)
    store.insert([first, made(2)])
    store.insert([first])   # a batch retried after its answer was lost
    assert store.count() == 2
    total, entries = store.page("a", Filters(), EVERYTHING, 0, 10)
    assert total == 2 and [e["requestId"] for e in entries] == ["rid-2", "rid-1"]
    assert entries[1] == first   # every field as written
    store.close()
    again = opened(tmp_path)     # kept across restarts
    assert again.count() == 2


def test_filters_pages_and_visible_scopes(tmp_path):
    store = opened(tmp_path)
    store.insert([made(1), made(2, user="bob", namespace="ns2"), made(3, kind="Node", group="",
                  resource="nodes", namespace="", name="n1"),
                  made(4, route="terminal", kind="pod", group="", resource="pods", name="p"),
                  made(5, cluster="b"), made(6, kind="nosuch", group="", resource="")])
    page = lambda filters, allowed=EVERYTHING, offset=0, limit=10: store.page(
        "a", filters, allowed, offset, limit)
    assert page(Filters())[0] == 5          # cluster b's entry is not a's
    assert [e["user"] for e in page(Filters(user="bob"))[1]] == ["bob"]
    assert page(Filters(namespace="ns2"))[0] == 1
    assert page(Filters(kind="NODE"))[1][0]["name"] == "n1"
    since, until = entry.millis_of(entry.rfc3339(BASE + 2)), entry.millis_of(
        entry.rfc3339(BASE + 4))
    assert [e["requestId"] for e in page(Filters(since=since, until=until))[1]] == [
        "rid-3", "rid-2"]
    total, second = page(Filters(), offset=2, limit=2)
    assert total == 5 and [e["requestId"] for e in second] == ["rid-3", "rid-2"]
    assert set(store.scopes("a", Filters())) == {
        ("apps", "deployments", "ns1", False), ("apps", "deployments", "ns2", False),
        ("", "nodes", "", False), ("", "pods", "ns1", True), ("", "", "ns1", False)}
    # A reader of deployments in ns1 only, and of nothing else.
    total, entries = page(Filters(), [("apps", "deployments", "ns1", False)])
    assert total == 1 and entries[0]["requestId"] == "rid-1"
    # Terminal sessions are their own scope: pods/exec, not a pod list.
    total, entries = page(Filters(), [("", "pods", "ns1", True)])
    assert [e["route"] for e in entries] == ["terminal"]
    assert page(Filters(), []) == (0, [])


def test_pruning_by_age_then_by_number(tmp_path):
    store = opened(tmp_path)
    store.insert([made(s) for s in range(10)])
    assert store.prune(BASE + 3, 100) == 3           # older than BASE+3
    assert store.prune(0, 4) == 3                    # the oldest beyond 4
    assert [e["requestId"] for e in store.page("a", Filters(), EVERYTHING, 0, 10)[1]] == [
        "rid-9", "rid-8", "rid-7", "rid-6"]
