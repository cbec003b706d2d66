"""Smoke runs that mostly wait start with the package's first test and run beside the others.

``bench_live``'s smoke run is timed phases of ten browsers at one request a second: a sixth of
a core over its 20-odd seconds; ``bench_lists``' starts and seeds a cluster of its own, where
the package's other runs leave a core mostly idle. A test module that says so (``EARLY_RUN``,
and only if one of its tests was collected) has its run started when the package's first test
starts; the run goes on beside the others and its test only reads what it wrote: the suite is
that much shorter, and each run is checked as if it ran alone."""

import os
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


def _early(item):
    return hasattr(getattr(item, "module", None), "EARLY_RUN")


def pytest_collection_modifyitems(session, config, items):
    """The tests of runs started early go last in this package, each run then having had the
    package's other tests' time to finish beside them (its test waits only for what is left)."""
    here = os.path.dirname(os.path.abspath(__file__))
    at = [i for i, item in enumerate(items) if str(item.path).startswith(here + os.sep)]
    if at:
        block = items[at[0]:at[-1] + 1]
        items[at[0]:at[-1] + 1] = [item for item in block if not _early(item)] + \
            [item for item in block if _early(item)]


@pytest.fixture(scope="package", autouse=True)
def early_runs(request, tmp_path_factory):
    """{module name: Run}: each collected test module of this package that has an
    ``EARLY_RUN = (argv, timeout)`` gets its run started here, before the package's first test;
    its test waits for it (``finish``)."""
    modules = {item.path.name: item.module for item in request.session.items if _early(item)}
    runs = {}
    try:
        for name, module in sorted(modules.items()):
            argv, timeout = module.EARLY_RUN
            out = tmp_path_factory.mktemp("early") / (name + ".json")
            runs[name] = Run(argv, out, timeout)
        yield runs
    finally:
        for run in runs.values():
            run.stop()
