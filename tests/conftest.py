"""Shared fixtures: one real local cluster per test session (tests/cluster/), its users'
tokens, fresh namespaces; and the shared plugins every directory may ask of by name (the
gateways, tests/support/fixtures.py; the browser, tests/support/browser.py). And, where no
bytecode is written, the project compiled once for the run's processes
(tests/support/bytecode.py)."""

import pytest

from tests.cluster.controlplane import REPO_ROOT, ClusterStartError, LocalCluster
from tests.support import bytecode

pytest_plugins = ("tests.support.fixtures", "tests.support.browser")
BYTECODE = pytest.StashKey()


def pytest_configure(config):
    # every Python process of the run reads the project compiled once (tests/support/bytecode.py)
    config.stash[BYTECODE] = bytecode.compile_once(str(REPO_ROOT))


def pytest_unconfigure(config):
    bytecode.remove(config.stash.get(BYTECODE, None))


@pytest.fixture(scope="session")
def cluster():
    try:
        local = LocalCluster.start(nodes=2)
    except ClusterStartError as e:
        # A missing cluster is a failure, never a skip.
        pytest.fail(f"local cluster did not start: {e}", pytrace=False)
    yield local
    local.stop()


@pytest.fixture(scope="session")
def seeded_cluster(cluster):
    """The cluster with the sample workloads of tests/cluster/workloads.py."""
    from tests.cluster.workloads import seed
    seed(cluster)
    return cluster


@pytest.fixture
def admin_token(cluster):
    return cluster.admin_token


@pytest.fixture
def editor_token(cluster):
    return cluster.editor_token


@pytest.fixture
def norights_token(cluster):
    return cluster.norights_token


@pytest.fixture
def namespace(cluster):
    """A fresh namespace that already accepts pods; deleted (not awaited) afterwards."""
    name = cluster.new_namespace()
    yield name
    cluster.request("DELETE", f"/api/v1/namespaces/{name}")
