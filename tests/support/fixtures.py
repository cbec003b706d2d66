"""Fixtures shared by the feature test directories, registered once for the whole suite
(tests/conftest.py's ``pytest_plugins``): a test asks for one by name, nothing is imported.

The gateways are the session's: one of each, started when the first test asks for it, shared
by every directory. A directory's conftest.py may override one (tests/writes and
tests/passthrough start their ``gateway`` with other flags); a test that must change a
gateway's state starts a gateway of its own (``start_gateway``, tests/gateway/conftest.py).
"""

import pytest

from tests.support import manycontexts
from tests.support.barrier import caught_up
from tests.support.gateway import Gateway
from tests.terminal.jsclient import JsClient


@pytest.fixture(scope="session")
def gateway(cluster):
    """A gateway with default flags (admin kubeconfig as its own identity, HTTP on 127.0.0.1,
    CSRF protection on, lists from the watch cache), started once its cache is synced. A write
    through it answers once its cache shows the write (cache/applied.py); objects the tests
    make directly in the API server are awaited in the gateway's lists by the tests that
    read them. tests/passthrough runs the pass-through path (--watch-cache=false)."""
    gw = Gateway.start(cluster)
    gw.wait_cache_synced()
    yield gw
    gw.stop()


@pytest.fixture(scope="session")
def cache_caught_up(cluster, gateway):
    """``cache_caught_up(*kinds)``: returns once the gateway's cache holds every change of
    those kinds made before the call (tests/support/barrier.py)."""
    namespace = cluster.new_namespace("barrier")
    yield lambda *kinds: caught_up(gateway, cluster.admin_token, namespace, *kinds)
    cluster.request("DELETE", "/api/v1/namespaces/" + namespace)


@pytest.fixture(scope="session")
def clusters_kubeconfig(cluster, tmp_path_factory):
    """A kubeconfig of the contexts "one" (current) and "two", both the local cluster, and
    "hung", an address that accepts connections and never answers (tests/support/
    manycontexts.py)."""
    sock, url = manycontexts.silent_server()
    yield manycontexts.write(str(tmp_path_factory.mktemp("clusters") / "kubeconfig"), cluster,
                             hung=("hung", url))
    sock.close()


# Between the tests that use them (tests/gateway, tests/webui), the gateways below let the
# caches of "two" and "hung" go; the default's ("one", the local cluster) stays, as any
# default cluster's does, following the session's changes like the session gateway.
CLUSTERS_IDLE = ("--cluster-idle-timeout", "60s")


@pytest.fixture(scope="session")
def clusters_ui(cluster, clusters_kubeconfig, tmp_path_factory):
    """A gateway serving the clusters of ``clusters_kubeconfig`` and a web root
    (manycontexts.INDEX and SCRIPT): one gateway for the API's tests and the browser's."""
    root = manycontexts.write_web_root(tmp_path_factory.mktemp("clusters-webroot"))
    gw = Gateway.start(cluster, "--kubeconfig", clusters_kubeconfig, "--web-root", str(root),
                       *CLUSTERS_IDLE, kubeconfig=False)
    yield gw
    gw.stop()


@pytest.fixture(scope="session")
def clusters_home(cluster, clusters_kubeconfig):
    """The same clusters without --web-root: the gateway's own home page."""
    gw = Gateway.start(cluster, "--kubeconfig", clusters_kubeconfig, *CLUSTERS_IDLE,
                       kubeconfig=False)
    yield gw
    gw.stop()


@pytest.fixture
def other_namespace(cluster):
    """A second fresh namespace (multi-namespace lists, moves between namespaces)."""
    name = cluster.new_namespace()
    yield name
    cluster.request("DELETE", "/api/v1/namespaces/" + name)


@pytest.fixture
def cluster_objects(cluster):
    """Collects REST paths of cluster-scoped objects a test creates; deletes them afterwards."""
    paths = []
    yield paths
    for path in reversed(paths):
        cluster.request("DELETE", path)


@pytest.fixture
def js():
    """The real sockjs-client, driven from Node.js (tests/terminal/jsclient.py)."""
    client = JsClient()
    yield client
    client.stop()
