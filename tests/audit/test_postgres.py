"""The audit trail in a PostgreSQL database (issue #39), a real server the tests start: the
store's SQL in PostgreSQL's dialect; two replicas writing to and reading from one database;
the database stopped while changes go on (the changes are made, their entries wait, /metrics
says so, reading is a 503) and started again (every entry written, none twice)."""

import re
import secrets

from dashboard_api.audit import entry
from dashboard_api.audit.postgresstore import PostgresStore, shown
from dashboard_api.audit.store import Filters
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for

EVERYTHING = [("apps", "deployments", None, False)]


def made(i, cluster):
    return entry.make(1795852862.0 + i, cluster, "alice", True, "oidc", "x", "r", "PUT",
                      entry.Target("deployment", "apps", "deployments", "ns%d" % (i % 2),
                                   "w%d" % i), 200)


def test_the_stores_sql_in_postgresql(postgres):
    store = PostgresStore(postgres.url)
    store.open()
    cluster = "c-" + secrets.token_hex(3)
    try:
        first = made(0, cluster)
        store.insert([first] + [made(i, cluster) for i in range(1, 6)])
        store.insert([first])   # retried after a lost answer: stored once
        total, entries = store.page(cluster, Filters(), EVERYTHING, 0, 4)
        assert total == 6 and [e["name"] for e in entries] == ["w5", "w4", "w3", "w2"]
        assert store.page(cluster, Filters(), EVERYTHING, 5, 4)[1] == [first]
        assert store.page(cluster, Filters(namespace="ns1"), EVERYTHING, 0, 10)[0] == 3
        assert set(store.scopes(cluster, Filters())) == {("apps", "deployments", "ns0", False),
                                                         ("apps", "deployments", "ns1", False)}
        assert store.page(cluster, Filters(), [("apps", "deployments", "ns0", False)], 0,
                          10)[0] == 3
        # The store opened the table once; a second store finds it.
        again = PostgresStore(postgres.url)
        again.open()
        assert again.page(cluster, Filters(), EVERYTHING, 0, 10)[0] == 6
        again.close()
    finally:
        store.close()
    assert shown("postgresql://u:s3cret@db:5432/a?sslmode=verify-full") == \
        "postgresql://u@db:5432/a?sslmode=verify-full"


def pending(gw):
    text = gw.get("/metrics").data.decode()
    found = re.search(r"^dashboard_audit_entries_pending (\S+)$", text, re.M)
    up = re.search(r"^dashboard_audit_store_up (\S+)$", text, re.M)
    failures = re.search(r"^dashboard_audit_store_failures_total (\S+)$", text, re.M)
    return float(found.group(1)), float(up.group(1)), float(failures.group(1))


def put(gw, token, namespace, name):
    reply = gw.request("PUT", "/api/v1/_raw/configmap/namespace/%s/name/%s" % (namespace, name),
                       token=token, body={"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": name}, "data": {"n": name}})
    assert reply.status == 204, reply
    return reply.headers["X-Request-Id"]


def ids_seen(gw, token, namespace):
    reply = gw.get("/api/v1/audit", token=token, params={"namespace": namespace,
                                                         "itemsPerPage": 100})
    assert reply.status == 200, reply
    return [e["requestId"] for e in reply.json()["entries"]]


def test_replicas_share_one_database_through_an_outage(postgres, cluster, namespace,
                                                        admin_token):
    # A password in the URL (the server trusts loopback and never asks for it) must never
    # reach the log.
    url = postgres.url.replace("://audit@", "://audit:s3cret@")
    replicas = [Gateway.start(cluster, "--audit-db", url) for _ in range(2)]
    a, b = replicas
    try:
        before = put(a, admin_token, namespace, "before")
        wait_for(lambda: before in ids_seen(b, admin_token, namespace), timeout=10,
                 what="a's entry read through b")
        postgres.stop()
        during = [put(gw, admin_token, namespace, "during-%d" % i)
                  for i, gw in enumerate(replicas)]
        # The changes were made while the database was down.
        for i in range(2):
            status, stored = cluster.request(
                "GET", "/api/v1/namespaces/%s/configmaps/during-%d" % (namespace, i))
            assert status == 200 and stored["data"] == {"n": "during-%d" % i}
        for gw in replicas:
            waiting, up, failures = wait_for(
                lambda gw=gw: (lambda m: m if m[2] >= 1 else None)(pending(gw)), timeout=15,
                what="a failed write of the audit database")
            assert waiting == 1 and up == 0, (waiting, up, failures)
            reply = gw.get("/api/v1/audit", token=admin_token)
            assert reply.status == 503 and "audit database" in reply.json()["message"]
            assert "does not take entries" in gw.log(whole=True)
        postgres.start()
        for gw in replicas:
            wait_for(lambda gw=gw: pending(gw)[:2] == (0, 1), timeout=15,
                     what="the waiting entries written")
        seen = ids_seen(b, admin_token, namespace)
        assert set([before] + during) <= set(seen)
        assert len(seen) == len(set(seen))   # each once
        rows = postgres.query("SELECT request_id FROM audit_entries WHERE namespace = '%s'"
                              % namespace)
        assert sorted(r[0] for r in rows) == sorted([before] + during)
        for gw in replicas:
            log = gw.log(whole=True)
            assert "takes entries again" in log and "s3cret" not in log
    finally:
        if postgres.proc is None:
            postgres.start()
        for gw in replicas:
            gw.stop()
