import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="session")
def gateway(cluster):
    """The pass-through path: every list is the caller's own LIST (--watch-cache=false)."""
    gw = Gateway.start(cluster, "--watch-cache=false")
    yield gw
    gw.stop()
