"""Which clusters a gateway serves (issue 28, item 1): every context of --kubeconfig, named by
it, one more per --cluster NAME=KUBECONFIG[:CONTEXT], the default one the kubeconfig's current
context or --default-cluster; and they follow the kubeconfig file without a restart: a context
added to it is served under its name within the poll period (--cluster-config-poll), one
removed from it is an unknown cluster again (404), its terminals ended. A cluster's watch cache starts on first
use and is let go after --cluster-idle-timeout unused (item 4)."""

import re

from tests.clusters.conftest import (CONTAINER, POD, pod_names, replace_kubeconfig, start_gateway,
                                     write_kubeconfig)
from tests.faults.proxy import FaultProxy
from tests.gateway.helpers import assert_error
from tests.support.waiting import wait_for
from tests.terminal.jsclient import new_session, sockjs_url

POLL = 1       # --cluster-config-poll, seconds
WITHIN = 15    # the poll, a cache start and a loaded machine's delays
IDLE = 2       # --cluster-idle-timeout, seconds
DEADLINE = 2   # --apiserver-request-timeout, seconds


def test_clusters_from_flags_and_the_default_one(alpha, beta, tmp_path):
    main = write_kubeconfig(str(tmp_path / "kubeconfig"), alpha=(alpha, None), beta=(beta, None))
    # Another file of two contexts: --cluster takes the one it names, or the current one.
    extra = write_kubeconfig(str(tmp_path / "extra"), current="first", first=(alpha, None),
                             second=(beta, None))
    # --apiserver-host names the default cluster's server (beta's, through a fault proxy).
    with FaultProxy.in_front_of(beta.cluster.url) as proxy:
        gw = start_gateway(main, "--cluster", "delta=%s:second" % extra,
                           "--cluster", "epsilon=%s" % extra, "--default-cluster", "beta",
                           "--apiserver-host", proxy.url,
                           "--apiserver-ca-bundle", beta.cluster.ca_file,
                           "--apiserver-request-timeout", "%ds" % DEADLINE)
        try:
            # The root is the default cluster, beta.
            detail = "/api/v1/namespace/" + beta.namespace
            assert gw.get(detail, token=beta.token).status == 200
            assert_error(gw.get("/api/v1/namespace/" + alpha.namespace, token=beta.token), 404)
            for name, seeded in (("delta", beta), ("epsilon", alpha), ("alpha", alpha),
                                 ("beta", beta)):
                reply = gw.get("/clusters/%s/api/v1/namespace/%s" % (name, seeded.namespace),
                               token=seeded.token)
                assert reply.status == 200, (name, reply)
            # The flag is the default cluster's only: with its server hung, delta (beta's own
            # address from the kubeconfig) answers.
            proxy.hang()
            for path in (detail, "/clusters/beta" + detail):
                assert_error(gw.get(path, token=beta.token), 504, "Timeout")
            assert gw.get("/clusters/delta" + detail, token=beta.token).status == 200
            proxy.passing()
            clusters = gw.get("/api/v1/clusters", token=beta.token).json()["clusters"]
            assert {c["name"]: c["default"] for c in clusters} == {
                "alpha": False, "beta": True, "delta": False, "epsilon": False}, clusters
            assert {c["name"]: c["server"] for c in clusters} == {
                "alpha": alpha.cluster.url, "beta": proxy.url, "delta": beta.cluster.url,
                "epsilon": alpha.cluster.url}, clusters
        finally:
            gw.stop()


def test_a_context_added_is_served_and_one_removed_is_gone(js, alpha, beta, tmp_path):
    path = write_kubeconfig(str(tmp_path / "kubeconfig"), alpha=(alpha, None), beta=(beta, None))
    gw = start_gateway(path, "--cluster-config-poll", str(POLL))
    try:
        gamma = gw.at("/clusters/gamma")
        listing = "/api/v1/namespace?filterBy=name," + beta.namespace
        assert_error(gamma.get(listing, token=beta.token), 404)
        # gamma: a third context, at beta's API server.
        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None), gamma=(beta, None))

        def served():
            reply = gamma.get(listing, token=beta.token)
            if reply.status in (404, 503):   # not read yet; its cache still syncing
                return None
            assert reply.status == 200, reply
            return [n["objectMeta"]["name"] for n in reply.json()["namespaces"]] == \
                [beta.namespace]
        wait_for(served, timeout=WITHIN, interval=0.3, what="cluster gamma served")
        assert gw.get("/clusters/gamma/api/v1/pod/" + beta.namespace,
                      token=beta.token).status == 200
        session_id = new_session(gamma, beta.token, beta.namespace, POD, CONTAINER)
        js.open("t", sockjs_url(gamma, session_id), bind=session_id)
        js.stdin("t", "echo on-gamma-$((6*7))\r")
        js.wait_output("t", "on-gamma-42")

        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None))
        wait_for(lambda: gamma.get(listing, token=beta.token).status == 404, timeout=WITHIN,
                 interval=0.3, what="cluster gamma gone")
        # Its terminal ended, saying why.
        assert js.wait_closed("t") == (2, "This cluster is no longer served here.")
        assert_error(gamma.get(listing, token=beta.token), 404)
        # The others are untouched.
        assert gw.get("/clusters/beta" + listing, token=beta.token).status == 200
        assert gw.get("/api/v1/namespace/" + alpha.namespace, token=alpha.token).status == 200
        clusters = gw.get("/api/v1/clusters", token=alpha.token).json()["clusters"]
        assert {c["name"] for c in clusters} == {"alpha", "beta"}, clusters
    finally:
        gw.stop()


def cache_series(gw, name):
    """The watch cache series of cluster ``name`` on /metrics: {kind: state}."""
    text = gw.get("/metrics").data.decode()
    return dict(re.findall(r'^dashboard_cache_state\{cluster="%s",kind="([^"]+)",state="([^"]+)"'
                           r'\} 1\.0$' % re.escape(name), text, re.M))


def test_a_cluster_cache_starts_on_first_use_and_is_let_go_when_idle(alpha, beta, tmp_path):
    path = write_kubeconfig(str(tmp_path / "kubeconfig"), alpha=(alpha, None), beta=(beta, None))
    gw = start_gateway(path, "--cluster-idle-timeout", "%ds" % IDLE)
    try:
        on_beta = gw.at("/clusters/beta")
        wait_for(lambda: cache_series(gw, "alpha"), timeout=WITHIN, what="alpha's cache")
        assert cache_series(gw, "beta") == {}   # nobody has asked beta anything yet
        assert POD in pod_names(on_beta, beta)
        states = wait_for(lambda: (lambda s: s if s and set(s.values()) == {"synced"} else None)(
            cache_series(gw, "beta")), timeout=WITHIN, what="beta's cache synced")
        assert "pod" in states, states
        # Unused for the idle time (and the reaper's round): let go; alpha's is kept.
        wait_for(lambda: cache_series(gw, "beta") == {}, timeout=IDLE * 2 + WITHIN,
                 interval=0.5, what="beta's cache let go")
        assert set(cache_series(gw, "alpha").values()) == {"synced"}
        assert "cluster beta unused for" in gw.log(whole=True)
        # The list of clusters says so, and does not start it again.
        clusters = gw.get("/api/v1/clusters", token=alpha.token).json()["clusters"]
        assert {c["name"]: c["cache"] for c in clusters} == {"alpha": "synced",
                                                              "beta": "stopped"}, clusters
        assert cache_series(gw, "beta") == {}
        # The next use starts it afresh.
        assert POD in pod_names(on_beta, beta)
        wait_for(lambda: cache_series(gw, "beta"), timeout=WITHIN, what="beta's cache again")
    finally:
        gw.stop()
