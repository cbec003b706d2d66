"""Clusters follow the kubeconfig file without a restart (issue 28, item 1): a context added
to it is served under its name within the poll period (--cluster-config-poll), and one
removed from it is an unknown cluster again (404)."""

from tests.clusters.conftest import replace_kubeconfig, start_gateway, write_kubeconfig
from tests.gateway.helpers import assert_error
from tests.support.waiting import wait_for

POLL = 1       # --cluster-config-poll, seconds
WITHIN = 15    # the poll, a cache start and a loaded machine's delays


def test_a_context_added_is_served_and_one_removed_is_gone(alpha, beta, tmp_path):
    path = str(tmp_path / "kubeconfig")
    write_kubeconfig(path, alpha=(alpha, None), beta=(beta, None))
    gw = start_gateway(path, "--cluster-config-poll", str(POLL))
    try:
        gamma = gw.at("/clusters/gamma")
        listing = "/api/v1/namespace?filterBy=name," + beta.namespace
        assert_error(gamma.get(listing, token=beta.token), 404)
        # gamma: a third context, at beta's API server.
        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None), gamma=(beta, None))

        def served():
            reply = gamma.get(listing, token=beta.token)
            if reply.status == 404:
                return None
            assert reply.status == 200, reply
            names = [n["objectMeta"]["name"] for n in reply.json()["namespaces"]]
            return names == [beta.namespace]
        wait_for(served, timeout=WITHIN, interval=0.3, what="cluster gamma served")
        clusters = gw.get("/api/v1/clusters", token=alpha.token).json()["clusters"]
        assert {c["name"] for c in clusters} == {"alpha", "beta", "gamma"}, clusters

        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None))
        wait_for(lambda: gamma.get(listing, token=beta.token).status == 404, timeout=WITHIN,
                 interval=0.3, what="cluster gamma gone")
        assert_error(gamma.get(listing, token=beta.token), 404)
        # The others are untouched.
        assert gw.get("/clusters/beta" + listing, token=beta.token).status == 200
        assert gw.get("/api/v1/namespace/" + alpha.namespace, token=alpha.token).status == 200
    finally:
        gw.stop()
