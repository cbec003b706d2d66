"""Fixtures of the faults suite (issue 27): the gateway reaches the real local API server
through a fault proxy of our own (tests/faults/proxy.py), with short deadlines set by flags so
that each fault plays out in seconds."""

import time

import pytest

from tests.faults.proxy import FaultProxy
from tests.support.gateway import Gateway
from tests.support.waiting import wait_for

CONNECT = 1.0       # --apiserver-connect-timeout
DEADLINE = 2.0      # --apiserver-request-timeout
WATCH_IDLE = 5.0    # --watch-idle-timeout
MARGIN = 1.5        # what an answer may take past its deadline on a loaded 2-core machine
FLAGS = ("--apiserver-connect-timeout=%gs" % CONNECT, "--apiserver-request-timeout=%gs" % DEADLINE,
         "--watch-idle-timeout=%gs" % WATCH_IDLE, "--access-cache-ttl=1s")


@pytest.fixture
def proxy(cluster):
    with FaultProxy.in_front_of(cluster.url) as fault_proxy:
        yield fault_proxy


@pytest.fixture
def faulty(cluster, proxy):
    """A gateway whose every connection to the API server goes through ``proxy``, synced."""
    gw = Gateway.start(cluster, *FLAGS, apiserver=proxy.url)
    try:
        gw.wait_cache_synced()
        wait_for(lambda: gw.get("/readyz").status == 200, timeout=30,
                 what="the gateway through the proxy to be ready")
        yield gw
    finally:
        gw.stop()


def timed(call, *args, **kwargs):
    """(reply, seconds) of one call."""
    start = time.monotonic()
    reply = call(*args, **kwargs)
    return reply, time.monotonic() - start
