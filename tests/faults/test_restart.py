"""A restart of the real kube-apiserver process itself (issue 27): the gateway answers
throughout, each answer within its deadline and a JSON error when not a 200, /healthz and
/readyz stay 200, and what is made after the restart is listed without restarting the
gateway."""

import secrets
import threading
import time

from tests.faults.conftest import DEADLINE, MARGIN, WATCH_IDLE, timed
from tests.resources import kube


class Prober:
    """Asks /healthz, /readyz and a list every 0.1 s from threads of its own; records every
    (path, status, seconds, body)."""

    def __init__(self, gw, token, list_path):
        self.gw, self.token = gw, token
        self.paths = ["/healthz", "/readyz", list_path]
        self.answers = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(p,), daemon=True)
                         for p in self.paths]

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(DEADLINE + MARGIN + 5)

    def _run(self, path):
        token = self.token if path.startswith("/api") else None
        while not self._stop.is_set():
            reply, seconds = timed(self.gw.get, path, token=token)
            body = reply.json() if reply.status != 200 and path.startswith("/api") else None
            self.answers.append((path, reply.status, seconds, body))
            self._stop.wait(0.1)


def test_a_restart_of_the_api_server(cluster, faulty, namespace):
    token = cluster.admin_token
    lists = "/api/v1/deployment/" + namespace
    with Prober(faulty, token, lists) as prober:
        time.sleep(0.5)
        started = time.monotonic()
        cluster.restart_apiserver()
        down = time.monotonic() - started
        name = "after-" + secrets.token_hex(3)
        kube.apps(cluster, namespace, "deployments", name, {"app": name})
        made = time.monotonic()
        deadline = made + WATCH_IDLE + 15
        while True:
            reply = faulty.get(lists, token=token)
            if reply.status == 200 and name in [
                    d["objectMeta"]["name"] for d in reply.json()["deployments"]]:
                break
            assert time.monotonic() < deadline, "not listed after the restart: %r" % reply
            time.sleep(0.2)
        listed = time.monotonic() - made
    print("API server restart: down %.1fs; a deployment made after it listed in %.1fs; "
          "%d probe answers, worst %.2fs" % (down, listed, len(prober.answers),
                                            max(a[2] for a in prober.answers)))
    assert faulty.proc.poll() is None
    for path, status, seconds, body in prober.answers:
        # The probes need no API server: well under a deadline even while the restarting
        # API server takes most of both cores.
        bound = DEADLINE if path in ("/healthz", "/readyz") else DEADLINE + MARGIN
        assert seconds < bound, (path, status, seconds, body)
        if path in ("/healthz", "/readyz"):
            assert status == 200, (path, status)
        elif status != 200:
            assert status in (503, 504), (path, status, body)
            assert body["status"] == "Failure" and body["code"] == status, body
