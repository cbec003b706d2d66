"""free_ports (tests/cluster/procs.py) never hands out a port twice in one process: a port named
before its server starts (the OpenID provider's redirect addresses) is not given to another
caller meanwhile, though the kernel may offer it again."""

import pytest

from tests.cluster import procs


class _Socket:
    """A socket whose bind to port 0 gets the next of ``picks``."""

    picks = []

    def __init__(self, *args):
        self.port = None

    def bind(self, address):
        self.port = _Socket.picks.pop(0)

    def getsockname(self):
        return ("127.0.0.1", self.port)

    def close(self):
        pass


@pytest.fixture
def kernel(monkeypatch):
    monkeypatch.setattr(procs.socket, "socket", _Socket)
    monkeypatch.setattr(procs, "_HANDED_OUT", set())
    return _Socket.picks


def test_a_port_handed_out_is_never_handed_out_again(kernel):
    kernel[:] = [40001, 40002, 40001, 40002, 40003, 40004]
    assert procs.free_ports(2) == [40001, 40002]
    assert procs.free_ports(2) == [40003, 40004]   # the kernel offered both again


def test_the_kernel_asked_a_bounded_number_of_times(kernel, monkeypatch):
    monkeypatch.setattr(procs, "_TRIES", 3)
    kernel[:] = [40001] + [40001] * 3
    assert procs.free_ports(1) == [40001]
    with pytest.raises(OSError, match="not handed out before"):
        procs.free_ports(1)
    assert kernel == []


def test_real_ports_are_distinct_and_bindable():
    ports = procs.free_ports(3) + procs.free_ports(3)
    assert len(set(ports)) == 6
    for port in ports:
        s = procs.socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        finally:
            s.close()
