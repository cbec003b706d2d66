"""A kubeconfig whose contexts all name the local test cluster (or an address that never
answers), for a gateway serving several clusters (issue #28) without starting more API
servers: enough for routes, cookies, the <base> of pages and the cluster picker. Two real
clusters behind one gateway are tests/clusters/'s."""

import socket

from tests.cluster import users


def write(path, cluster, contexts=("one", "two"), current="one", hung=None):
    """Writes ``path``: each name of ``contexts`` a context of the local cluster with its admin
    token; ``hung`` (a name) one more whose server accepts connections and never answers
    (``silent_server``'s address, passed as ``hung=(name, url)``)."""
    servers = [(name, cluster.url) for name in contexts]
    if hung:
        servers.append(hung)
    users.write_contexts(path, {name: (url, cluster.ca_file, "admin", cluster.admin_token)
                                for name, url in servers}, current)
    return path


def silent_server():
    """A listening socket on 127.0.0.1 that never accepts: connections open (the kernel's
    backlog) and nothing ever answers. Returns (socket, url); close the socket after."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    return sock, "https://127.0.0.1:%d" % sock.getsockname()[1]


# The web root of the gateways tests/support/fixtures.py starts (``clusters_ui``). The page
# stands in for the upstream UI where it matters to a browser: its calls are relative, it
# writes a <base> of its own after the gateway's (as upstream's index does once its config
# probe answers), and shows the base and its config call's answer.
INDEX = b"""<!doctype html>
<html><head><title>UI</title>
<script>document.write('<base href="/">');</script>
</head><body><p id="base"></p><p id="config"></p>
<script>
document.getElementById("base").textContent = document.baseURI;
fetch("config").then(function (r) {
  document.getElementById("config").textContent = r.status + " " + new URL(r.url).pathname;
});
</script></body></html>
"""
SCRIPT = b"// the UI's code\n"   # main.js, one more file of the UI


def write_web_root(root):
    """``root`` (a pathlib.Path, a directory) gets INDEX as index.html and SCRIPT as main.js."""
    (root / "index.html").write_bytes(INDEX)
    (root / "main.js").write_bytes(SCRIPT)
    return root
