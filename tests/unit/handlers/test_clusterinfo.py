"""The API server address /api/v1/cluster shows: scheme, host and port only."""

import pytest

from dashboard_api.handlers.clusterinfo import public_address


@pytest.mark.parametrize("host, shown", [
    ("https://127.0.0.1:6443", "https://127.0.0.1:6443"),
    ("https://admin:secret@api.example.com:6443/prefix?x=1", "https://api.example.com:6443"),
    ("https://[::1]:6443", "https://[::1]:6443"),
    ("http://kubernetes.default.svc", "http://kubernetes.default.svc"),
])
def test_address_without_credentials_or_path(host, shown):
    assert public_address(host) == shown
