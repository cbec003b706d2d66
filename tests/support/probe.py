"""A liveness probe for attack tests: while an attack runs, is the gateway still answering?

``Probe(gateway, token, list_path)`` asks ``GET /healthz`` and, with a token, an authenticated
list, each every ``interval`` seconds from threads of its own, and records every latency. The
list matters: work moved to a thread that still holds the interpreter lock leaves /healthz
slow too, but a list also needs the executor and the API server. Use it as a context manager::

    with Probe(gw, admin_token) as probe:
        attack()
    probe.assert_responsive(max_seconds=1.0)

Every request has its own timeout, so a frozen gateway shows up as a failed probe, not a hang.

The bound is the gateway's, not the machine's: a thread of the probe also measures how late
its own short sleeps wake (the test process starved of CPU, as on a loaded machine), and the
worst such delay is added to the bound. A gateway that holds its event loop is late while the
test process is not, so that still fails.
"""

import threading
import time

import urllib3


class Probe:
    def __init__(self, gateway, token=None, list_path="/api/v1/namespace", interval=0.2,
                 timeout=5.0):
        self.gateway = gateway
        self.token = token
        self.list_path = list_path
        self.interval = interval
        self.http = urllib3.PoolManager(cert_reqs="CERT_NONE", retries=False,
                                        timeout=urllib3.Timeout(connect=timeout, read=timeout))
        self.samples = {"healthz": [], "list": []}
        self.own_lag = []   # how late the probe's own sleeps woke: the machine's share
        self.failures = []
        self._stop = threading.Event()
        self._threads = []

    def __enter__(self):
        self._threads = [threading.Thread(target=self._run, args=("healthz",), daemon=True),
                         threading.Thread(target=self._lag, daemon=True)]
        if self.token:
            self._threads.append(threading.Thread(target=self._run, args=("list",), daemon=True))
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(10)
        return False

    def _run(self, which):
        path, headers = "/healthz", {}
        if which == "list":
            path, headers = self.list_path, {"Authorization": "Bearer " + self.token}
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                status = self.http.request("GET", self.gateway.url + path, headers=headers,
                                           preload_content=True).status
                if status != 200:
                    self.failures.append((which, "status %d" % status))
            except Exception as e:  # a timeout or a refused connection is what we look for
                self.failures.append((which, type(e).__name__))
            self.samples[which].append(time.monotonic() - start)
            self._stop.wait(self.interval)

    def _lag(self, nap=0.05):
        while not self._stop.is_set():
            start = time.monotonic()
            time.sleep(nap)
            self.own_lag.append(time.monotonic() - start - nap)

    def worst(self, which="healthz"):
        return max(self.samples[which], default=0.0)

    def assert_responsive(self, max_seconds=1.0, list_seconds=None):
        """Every probe answered 200 within `max_seconds` (plus the test process's own worst
        scheduling delay meanwhile), and there were some of each. `list_seconds`: the list's
        own bound, when its road is longer than the gateway's (a pass-through gateway's list
        is the API server's LIST, another process on the same loaded machine, whose delays
        the probe's own lag does not measure); `max_seconds` by default."""
        assert not self.failures, "probe failures during the attack: %r" % self.failures[:10]
        machine = max(self.own_lag, default=0.0)
        for which, values in self.samples.items():
            if which == "list" and not self.token:
                continue
            bound = list_seconds if which == "list" and list_seconds else max_seconds
            assert values, "no %s probe ran during the attack" % which
            assert max(values) < bound + machine, \
                "%s took %.2f s during the attack (bound %.1f s + %.2f s the probe itself " \
                "woke late)" % (which, max(values), bound, machine)
