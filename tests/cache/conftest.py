import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="module")
def cached(cluster):
    """A gateway answering lists from its watch cache, with a one-second authorization TTL."""
    gw = Gateway.start(cluster, "--access-cache-ttl=1s")
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def passthrough(cluster):
    """A gateway whose every list goes to the API server."""
    gw = Gateway.start(cluster, "--watch-cache=false")
    yield gw
    gw.stop()
