"""Gateway fixtures shared by the feature test directories.

A directory's conftest.py imports what it uses, e.g.
``from tests.support.fixtures import gateway  # noqa: F401``.
"""

import pytest

from tests.support.gateway import Gateway


@pytest.fixture(scope="session")
def gateway(cluster):
    """A gateway with default flags (admin kubeconfig as its own identity, HTTP on 127.0.0.1,
    CSRF protection on) except that its lists go to the API server: the feature tests read
    right after they write, and lists from the watch cache follow writes only as fast as the
    watch delivers them (milliseconds, more on a loaded machine). tests/cache shows, for every
    kind, that the cached lists are the same as these."""
    gw = Gateway.start(cluster, "--watch-cache=false")
    yield gw
    gw.stop()
