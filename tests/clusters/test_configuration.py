"""Which clusters a gateway serves (issue 28, item 1): every context of --kubeconfig, named by
it, one more per --cluster NAME=KUBECONFIG[:CONTEXT], the default one the kubeconfig's current
context or --default-cluster; and they follow the kubeconfig file without a restart: a context
added to it is served under its name within the poll period (--cluster-config-poll), one
changed in it is served anew, one removed from it is an unknown cluster again (404), the
terminals of a cluster changed or removed ended; a file that cannot be read changes nothing.
A cluster's watch cache starts on first use and is let go after --cluster-idle-timeout unused
(item 4)."""

import os
import re

import pytest

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


def namespace_listed(gw, seeded, pending=(404, 503)):
    """Whether ``gw`` lists ``seeded``'s own namespace (None on a ``pending`` status: the
    cluster unknown yet, its cache still syncing)."""
    reply = gw.get("/api/v1/namespace?filterBy=name," + seeded.namespace, token=seeded.token)
    if reply.status in pending:
        return None
    assert reply.status == 200, reply
    return [n["objectMeta"]["name"] for n in reply.json()["namespaces"]] == [seeded.namespace]


def test_clusters_follow_the_kubeconfig_file(js, alpha, beta, tmp_path):
    path = write_kubeconfig(str(tmp_path / "kubeconfig"), alpha=(alpha, None), beta=(beta, None))
    gw = start_gateway(path, "--cluster-config-poll", str(POLL))
    try:
        gamma = gw.at("/clusters/gamma")
        assert_error(gamma.get("/api/v1/namespace", token=beta.token), 404)
        # Added: gamma, a third context, at beta's API server.
        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None), gamma=(beta, None))
        wait_for(lambda: namespace_listed(gamma, beta), timeout=WITHIN, interval=0.3,
                 what="cluster gamma served")
        assert gamma.get("/api/v1/pod/" + beta.namespace, token=beta.token).status == 200
        session_id = new_session(gamma, beta.token, beta.namespace, POD, CONTAINER)
        js.open("t", sockjs_url(gamma, session_id), bind=session_id)
        js.stdin("t", "echo on-gamma-$((6*7))\r")
        js.wait_output("t", "on-gamma-42")

        # A file that cannot be read (half written, broken): the clusters served stay.
        with open(path + ".new", "w") as f:
            f.write("contexts: [")
        os.replace(path + ".new", path)
        wait_for(lambda: "kubeconfig not re-read" in gw.log(whole=True), timeout=WITHIN,
                 interval=0.3, what="the broken kubeconfig noticed")
        assert namespace_listed(gamma, beta)
        assert js.conns["t"].closed is None

        # Changed: gamma now at alpha's API server, with alpha's token. Its terminal, on the
        # cluster gamma was, ends saying why.
        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None), gamma=(alpha, None))
        # (Until the file is read again, alpha's token is beta's 401 there.)
        wait_for(lambda: namespace_listed(gamma, alpha, pending=(401, 404, 503)),
                 timeout=WITHIN, interval=0.3, what="cluster gamma at alpha's API server")
        assert js.wait_closed("t") == (2, "This cluster is no longer served here.")
        assert_error(gamma.get("/api/v1/namespace/" + beta.namespace, token=alpha.token), 404)

        # Removed: an unknown cluster again.
        replace_kubeconfig(path, alpha=(alpha, None), beta=(beta, None))
        wait_for(lambda: gamma.get("/api/v1/namespace", token=alpha.token).status == 404,
                 timeout=WITHIN, interval=0.3, what="cluster gamma gone")
        assert_error(gamma.get("/api/v1/namespace", token=alpha.token), 404)
        # The others are untouched.
        assert namespace_listed(gw.at("/clusters/beta"), beta)
        assert namespace_listed(gw, alpha)
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


@pytest.mark.parametrize("flags, says", [
    (("--default-cluster", "nope"), "--default-cluster nope: no such cluster"),
    (("--cluster", "beta={kubeconfig}:alpha"), "two clusters are named beta"),
    (("--cluster", "delta={kubeconfig}:nope"), "--cluster delta: no context nope"),
])
def test_a_configuration_naming_clusters_wrongly_is_refused_at_start(alpha, beta, tmp_path,
                                                                      flags, says):
    path = write_kubeconfig(str(tmp_path / "kubeconfig"), alpha=(alpha, None), beta=(beta, None))
    with pytest.raises(RuntimeError, match="gateway exited") as refused:
        gw = start_gateway(path, *(flag.format(kubeconfig=path) for flag in flags))
        gw.stop()
    assert says in str(refused.value)
