"""The fuzzer's run goes on beside the rest of the suite (fuzzrun.py says why).

A test module of this package with ``RUNS_BESIDE`` (test_fuzz.py) is moved to the end of the
session, and its run (``fuzz_started``, session-wide) starts with the package's first test, so
the suite's other packages run beside it and its test waits only for what is left of it. Run
alone (``pytest tests/hardening/test_fuzz.py``), the run starts with its test."""

import pytest

from tests.hardening.fuzzrun import FuzzRun


def _beside(item):
    return getattr(getattr(item, "module", None), "RUNS_BESIDE", False)


def pytest_collection_modifyitems(session, config, items):
    """The tests of runs that go on beside the others go last in the session."""
    beside = [item for item in items if _beside(item)]
    if beside:
        items[:] = [item for item in items if not _beside(item)] + beside


@pytest.fixture(scope="session")
def fuzz_started(cluster, seeded_cluster, tmp_path_factory):
    """The fuzzer's run (fuzzrun.py), started at this fixture's first use; stopped, and what
    it made removed, at the session's end if its test did not do it first."""
    run = FuzzRun(cluster, tmp_path_factory.mktemp("fuzz"))
    yield run
    run.stop()


@pytest.fixture(scope="package", autouse=True)
def runs_beside(request):
    """Starts the runs of the collected RUNS_BESIDE modules with the package's first test."""
    if any(_beside(item) for item in request.session.items):
        request.getfixturevalue("fuzz_started")
