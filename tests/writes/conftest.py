import pytest

from tests.resources.checks import cluster_objects  # noqa: F401
from tests.support.gateway import Gateway


@pytest.fixture(scope="module")
def gateway(cluster):
    """One gateway per test module, with CSRF protection on."""
    gw = Gateway.start(cluster, "--enable-openapi")
    yield gw
    gw.stop()
