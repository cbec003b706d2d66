"""Shared fixtures: one real local cluster per test session (tests/cluster/), its users'
tokens, fresh namespaces; and the shared plugins every directory may ask of by name (the
gateways, tests/support/fixtures.py; the browser, tests/support/browser.py)."""

import pytest

from tests.cluster.controlplane import ClusterStartError, LocalCluster

pytest_plugins = ("tests.support.fixtures", "tests.support.browser")


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
