import pytest

from tests.support.fixtures import cache_caught_up, gateway  # noqa: F401


@pytest.fixture
def other_namespace(cluster):
    """A second fresh namespace for multi-namespace lists."""
    name = cluster.new_namespace()
    yield name
    cluster.request("DELETE", "/api/v1/namespaces/" + name)
