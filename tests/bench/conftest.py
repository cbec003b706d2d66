"""Smoke runs that mostly wait start with the package's first test and run beside the others.

``bench_live``'s smoke run is timed phases of ten browsers at one request a second: a sixth of
a core over its 20-odd seconds. Started when the first smoke test of this package starts (only
if its test was collected), it runs beside the busy ones (``bench_lists`` seeding its own
cluster) and its test only reads what it wrote: the suite is that much shorter, and each run is
checked exactly as if it had run alone."""

import subprocess
import sys

import pytest

from tests.support.gateway import ROOT


class Run:
    """A benchmark's smoke run in a process of its own, its JSON written to ``out``."""

    def __init__(self, argv, out, timeout):
        self.out, self.timeout = out, timeout
        self.log = out.with_suffix(".log")   # a file: a pipe nobody reads yet could fill
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m"] + argv + ["--json", str(out)],
                                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)

    def finish(self):
        """Waits for the run (at most its timeout from now); fails the test with the end of
        its log if it did not end well; returns its JSON."""
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail("%s did not end within %ss" % (self.proc.args[2], self.timeout))
        assert self.proc.returncode == 0, self.log.read_text(errors="replace")[-4000:]
        return self.out.read_text()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# Started early: the module whose test reads it -> (argv, timeout of the wait for it).
EARLY = {
    "test_bench_live_smoke.py": (
        ["tests.bench.bench_live", "--pods", "300", "--browsers", "10", "--interval", "1",
         "--seconds", "2", "--subscribers", "10", "--probes", "1", "--soak-seconds", "2",
         "--page-requests", "5", "--background-seconds", "1", "--churn", "20",
         "--event-rate", "5", "--client-processes", "1", "--budget", "60"], 180),
}


@pytest.fixture(scope="package", autouse=True)
def early_runs(request, tmp_path_factory):
    """{module name: Run} of the EARLY runs whose tests this session will run."""
    collected = {item.path.name for item in request.session.items}
    runs = {}
    try:
        for module, (argv, timeout) in EARLY.items():
            if module in collected:
                out = tmp_path_factory.mktemp("early") / (module + ".json")
                runs[module] = Run(argv, out, timeout)
        yield runs
    finally:
        for run in runs.values():
            run.stop()
