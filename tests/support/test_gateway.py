"""The test gateway's start (tests/support/gateway.py) returns only once its own process
listens: a port another server holds makes it fail, never hands that server to the test."""

import socket

import pytest

from tests.cluster.procs import free_ports
from tests.support.gateway import Gateway


def test_a_port_another_server_listens_on_is_a_failed_start(cluster):
    [port] = free_ports(1)
    other = socket.socket()
    try:
        other.bind(("127.0.0.1", port))
        other.listen()
        with pytest.raises(RuntimeError, match="gateway exited"):
            # Had it returned, the gateway it started would be stopped here, not left running
            # (it would bind the port once the other socket closes).
            Gateway.start(cluster, port=port, timeout=20).stop()
    finally:
        other.close()


def test_a_started_gateway_answers_on_its_port(cluster):
    gw = Gateway.start(cluster, "--watch-cache=false")
    try:
        assert gw.get("/healthz").status == 200
        assert gw.proc.poll() is None
    finally:
        gw.stop()
