"""Fixtures of the hostile-input suite (issue 18): attacks against a real gateway on the local
cluster, each run while tests/support/probe.py asks /healthz and an authenticated list.

``rss_kib`` and ``raw_socket`` help the tests measure memory and talk HTTP by hand;
``open_file_limit`` raises this process's open-file limit (within the hard limit) for the
connection floods; the gateways started here inherit it.
"""

import resource
import socket

import pytest

from tests.support.gateway import Gateway

FLOOD_FILES = 4096


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)


def raw_socket(gw, timeout=5.0):
    host, port = gw.url.split("//")[1].split(":")
    return socket.create_connection((host, int(port)), timeout=timeout)


@pytest.fixture(scope="session")
def open_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FLOOD_FILES if hard == resource.RLIM_INFINITY else min(FLOOD_FILES, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    yield min(want, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture(scope="module")
def strict_gateway(cluster, open_file_limit):
    """A gateway with short connection deadlines, so that the tests see them expire: headers
    due within 2 s, idle keep-alive 4 s, at most 700 connections."""
    gw = Gateway.start(cluster, "--watch-cache=false", "--header-timeout", "2s",
                       "--idle-timeout", "4s", "--max-connections", "700")
    yield gw
    gw.stop()
