import secrets

import pytest

from tests.support.fixtures import gateway  # noqa: F401


@pytest.fixture
def other_namespace(cluster):
    """A second fresh namespace for multi-namespace lists."""
    name = "t-" + secrets.token_hex(4)
    status, body = cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    assert status == 201, (status, body)
    cluster.service_account_token(name, "default")
    yield name
    cluster.request("DELETE", "/api/v1/namespaces/" + name)
