import pytest

from tests.resources.checks import cluster_objects  # noqa: F401
from tests.resources.conftest import other_namespace  # noqa: F401
from tests.support.fixtures import cache_caught_up  # noqa: F401
from tests.support.gateway import Gateway


@pytest.fixture(scope="session")
def gateway(cluster):
    """The pass-through path: every list is the caller's own LIST (--watch-cache=false)."""
    gw = Gateway.start(cluster, "--watch-cache=false")
    yield gw
    gw.stop()
