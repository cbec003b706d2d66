"""The OpenID Connect sign-in end to end (issue 29): a certified provider on loopback over
TLS (provider.py), a local cluster of its own whose API server trusts it (--oidc-* flags),
RBAC by the provider's groups, and a gateway signing people in with it. Everything is started
once per module; the cluster is this module's own because its API server's flags differ."""

import base64
import os
import shutil

import pytest

from tests.cluster.controlplane import ClusterStartError, LocalCluster
from tests.cluster.procs import free_ports
from tests.oidc.provider import ACCOUNTS, CLIENT_ID, OpenIdProvider
from tests.support.gateway import Gateway
from tests.support.browser import chromium_path

PAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page")
ID_TOKEN_TTL = 12  # seconds: a refresh happens within a test
TEAMS = {"oidc-team-a": "oidc-a", "oidc-team-b": "oidc-b"}  # group -> the namespace it sees


class Setup:
    """``provider``, ``cluster``, ``gateway``, ``url`` (the gateway's)."""


def _wait_oidc_authenticator(cluster, issuer, timeout=30):
    """kube-apiserver 1.20 first discovers the issuer 10 s after it starts (wait.PollUntil):
    until then it refuses every ID token, saying so in its log. Sends a token of the issuer
    it cannot verify until its log says something else about it."""
    import base64
    import json
    import time

    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    probe = ".".join((part({"alg": "RS256"}), part({"iss": issuer, "aud": CLIENT_ID}), "c2ln"))
    log = os.path.join(cluster.state_dir, "kube-apiserver.log")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cluster.request("GET", "/api/v1/namespaces", token=probe)
        with open(log, errors="replace") as f:
            refusals = [line for line in f if "Unable to authenticate" in line]
        if refusals and "authenticator not initialized" not in refusals[-1]:
            return
        time.sleep(0.5)
    raise RuntimeError("the API server's OIDC authenticator did not start within %ss" % timeout)


def _grant_groups(cluster):
    for group, namespace in TEAMS.items():
        cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        cluster.request("POST", "/api/v1/namespaces/%s/configmaps" % namespace,
                        {"metadata": {"name": namespace + "-settings"}, "data": {"k": "v"}})
        cluster.request(
            "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % namespace,
            {"metadata": {"name": group + "-view"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": "view"},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                           "name": group}]})


@pytest.fixture(scope="module")
def oidc_setup(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("oidc"))
    web_root = os.path.join(directory, "webroot")
    shutil.copytree(PAGE_DIR, web_root)
    port, home_port = free_ports(2)
    url, home_url = "http://127.0.0.1:%d" % port, "http://127.0.0.1:%d" % home_port
    provider = OpenIdProvider(directory, [url, home_url], ID_TOKEN_TTL)
    setup = Setup()
    setup.provider, setup.url, setup.home_url = provider, url, home_url
    cluster = gateway = home = None
    try:
        try:
            cluster = LocalCluster.start(nodes=1, apiserver_flags=[
                "--oidc-issuer-url=" + provider.issuer, "--oidc-client-id=" + CLIENT_ID,
                "--oidc-username-claim=email", "--oidc-groups-claim=groups",
                "--oidc-ca-file=" + provider.ca_file])
        except ClusterStartError as e:
            pytest.fail("local cluster did not start: %s" % e, pytrace=False)
        _grant_groups(cluster)
        # A CSRF key the tests know: they open the sealed refresh cookie (test_kubeconfig).
        setup.csrf_key = os.urandom(32)
        key_file = os.path.join(directory, "csrf-key")
        with open(key_file, "w") as f:
            f.write(base64.b64encode(setup.csrf_key).decode())
        secret_file = os.path.join(directory, "client-secret")
        with open(secret_file, "w") as f:
            f.write(provider.client_secret)
        flags = ["--oidc-issuer-url", provider.issuer, "--oidc-client-id", CLIENT_ID,
                 "--oidc-client-secret-file", secret_file, "--oidc-scopes", "openid,email,groups",
                 "--oidc-ca-file", provider.ca_file, "--oidc-username-claim", "email",
                 "--csrf-key-file", key_file]
        gateway = Gateway.start(cluster, "--web-root", web_root, "--web-ui-compat",
                                "--oidc-redirect-url", url + "/oidc/callback", *flags,
                                port=port)
        # The gateway's own home page (no --web-root) offers sign-in with the provider too.
        home = Gateway.start(cluster, "--oidc-redirect-url", home_url + "/oidc/callback",
                             *flags, port=home_port)
        # Last: the gateways started meanwhile (they need no ID token).
        _wait_oidc_authenticator(cluster, provider.issuer)
        setup.cluster, setup.gateway, setup.home = cluster, gateway, home
        yield setup
    finally:
        for started in (gateway, home):
            if started is not None:
                started.stop()
        if cluster is not None:
            cluster.stop()
        provider.stop()


__all__ = ["ACCOUNTS", "TEAMS", "chromium_path", "oidc_setup"]
