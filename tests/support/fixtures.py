"""Gateway fixtures shared by the feature test directories.

A directory's conftest.py imports what it uses, e.g.
``from tests.support.fixtures import gateway  # noqa: F401``.
"""

import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="session")
def gateway(cluster):
    """A gateway with default flags: admin kubeconfig as its own identity, HTTP on 127.0.0.1,
    CSRF protection on."""
    gw = Gateway.start(cluster)
    yield gw
    gw.stop()
