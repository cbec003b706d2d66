"""Fixtures of the gateway service tests."""

import pytest

from tests.support.gateway import Gateway


@pytest.fixture
def start_gateway(cluster):
    """Starts gateways with extra flags (Gateway.start's arguments); stops them after the test."""
    started = []

    def start(*args, **kw):
        gw = Gateway.start(cluster, *args, **kw)
        started.append(gw)
        return gw

    yield start
    for gw in started:
        gw.stop()
