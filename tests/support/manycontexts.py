"""A kubeconfig whose contexts all name the local test cluster (or an address that never
answers), for a gateway serving several clusters (issue #28) without starting more API
servers: enough for routes, cookies, the <base> of pages and the cluster picker. Two real
clusters behind one gateway are tests/clusters/'s."""

import socket

from tests.cluster.users import _write_private

import yaml


def write(path, cluster, contexts=("one", "two"), current="one", hung=None):
    """Writes ``path``: each name of ``contexts`` a context of the local cluster with its admin
    token; ``hung`` (a name) one more whose server accepts connections and never answers
    (``silent_server``'s address, passed as ``hung=(name, url)``)."""
    servers = [(name, cluster.url) for name in contexts]
    if hung:
        servers.append(hung)
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url,
                                                "certificate-authority": cluster.ca_file}}
                     for name, url in servers],
        "users": [{"name": "admin", "user": {"token": cluster.admin_token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": "admin"}}
                     for name, _url in servers],
        "current-context": current,
    }
    _write_private(path, yaml.safe_dump(config, sort_keys=False))
    return path


def silent_server():
    """A listening socket on 127.0.0.1 that never accepts: connections open (the kernel's
    backlog) and nothing ever answers. Returns (socket, url); close the socket after."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock, "https://127.0.0.1:%d" % sock.getsockname()[1]
