"""A rolling restart under load: 16 clients poll lists through nginx while each replica in turn
gets SIGTERM and is started again; no request fails."""

import threading
import time

import urllib3

CLIENTS = 16
PAUSE = 0.05  # between two polls of one client
MAX_POLLS = 4000  # per client: a bound, far above what the restarts take
SERVED = "Incoming HTTP/1.1 GET /api/v1/"


def poll(url, paths, token, stop, counts, failures, index):
    http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=5, read=30))
    headers = {"Authorization": "Bearer " + token}
    n = 0
    while not stop.is_set() and n < MAX_POLLS:
        path = paths[(n + index) % len(paths)]
        try:
            reply = http.request("GET", url + path, headers=headers)
            if reply.status != 200:
                failures.append((path, reply.status, reply.data[:200]))
        except urllib3.exceptions.HTTPError as exc:
            failures.append((path, type(exc).__name__, str(exc)[:200]))
        n += 1
        counts[index] = n
        time.sleep(PAUSE)
    http.clear()


def test_rolling_restart_under_load_fails_no_request(replicas, admin_token, web_pod):
    paths = ["/api/v1/pod/%s?itemsPerPage=10" % web_pod, "/api/v1/deployment?itemsPerPage=5",
             "/api/v1/namespace", "/api/v1/node", "/api/v1/configmap/%s" % web_pod]
    stop, counts, failures = threading.Event(), [0] * CLIENTS, []
    threads = [threading.Thread(target=poll, args=(replicas.nginx.url, paths, admin_token, stop,
                                                   counts, failures, i), daemon=True)
               for i in range(CLIENTS)]
    for t in threads:
        t.start()
    exits = []
    try:
        time.sleep(1)
        for index in range(len(replicas.gateways)):
            old = replicas.gateways[index]
            exits.append(replicas.restart(index))
            # It went on serving after the signal, for the drain period.
            log = old.log(whole=True)
            after = log[log.index("stopping (SIGTERM)"):]
            assert SERVED in after
            time.sleep(1)
        # Under load until both restarted replicas serve again (nginx tries a replica it saw
        # down again after a second).
        deadline = time.monotonic() + 15
        while not all(SERVED in gw.log(whole=True) for gw in replicas.gateways):
            assert time.monotonic() < deadline, "a restarted replica serves nothing"
            time.sleep(0.2)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    total = sum(counts)
    print("\nrolling restart: %d requests by %d clients, %d failed; replicas exited in %s s"
          % (total, CLIENTS, len(failures), ", ".join("%.1f" % e for e in exits)))
    assert failures == [], failures[:5]
    assert total > 300 and all(counts)
    assert all(1.0 <= e < 10 for e in exits)  # the drain period (1 s), well within the grace
