"""The OpenID Connect sign-in end to end (issue 29): a certified provider on loopback over
TLS (provider.py), a local cluster of its own whose API server trusts it (--oidc-* flags),
RBAC by the provider's groups, and gateways signing people in with it. The provider and the
cluster are started once for the package (``oidc_base``; the cluster is the package's own
because its API server's flags differ), each module's gateways once per module; test_fleet.py
adds the session's cluster, which does not trust the provider, in impersonate mode."""

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


def grant_groups(cluster, prefix="", role="view"):
    """Each team's group (with ``prefix``) gets ``role`` in its namespace, which holds a
    configmap named after it."""
    for group, namespace in TEAMS.items():
        cluster.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        cluster.request("POST", "/api/v1/namespaces/%s/configmaps" % namespace,
                        {"metadata": {"name": namespace + "-settings"}, "data": {"k": "v"}})
        cluster.request(
            "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % namespace,
            {"metadata": {"name": group + "-" + role},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                         "name": role},
             "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                           "name": prefix + group}]})


class Base:
    """What the package shares: ``provider``, ``cluster`` (its API server trusts the
    provider), ``ports`` (the gateways' ports, registered at the provider as redirect URLs:
    GATEWAY, HOME, FLEET, FLEET_HOME), ``directory``, ``csrf_key`` and ``key_file``,
    ``secret_file``, ``web_root`` (the stand-in web UI, page/)."""

    def url(self, which):
        return "http://127.0.0.1:%d" % self.ports[which]

    def flags(self):
        """The gateway's --oidc-* flags of the provider (the redirect URL aside)."""
        return ["--oidc-issuer-url", self.provider.issuer, "--oidc-client-id", CLIENT_ID,
                "--oidc-client-secret-file", self.secret_file,
                "--oidc-scopes", "openid,email,groups", "--oidc-ca-file", self.provider.ca_file,
                "--oidc-username-claim", "email", "--csrf-key-file", self.key_file]


GATEWAY, HOME, FLEET, FLEET_HOME = "gateway", "home", "fleet", "fleet-home"


@pytest.fixture(scope="package")
def oidc_base(tmp_path_factory):
    """The provider and a local cluster of its own whose API server trusts it, started once
    for the package (test_browser_signin.py, test_fleet.py)."""
    base = Base()
    base.directory = directory = str(tmp_path_factory.mktemp("oidc"))
    base.ports = dict(zip((GATEWAY, HOME, FLEET, FLEET_HOME), free_ports(4)))
    base.web_root = os.path.join(directory, "webroot")
    shutil.copytree(PAGE_DIR, base.web_root)
    provider = OpenIdProvider(directory, [base.url(w) for w in base.ports], ID_TOKEN_TTL)
    base.provider, cluster = provider, None
    try:
        try:
            cluster = LocalCluster.start(nodes=1, apiserver_flags=[
                "--oidc-issuer-url=" + provider.issuer, "--oidc-client-id=" + CLIENT_ID,
                "--oidc-username-claim=email", "--oidc-groups-claim=groups",
                "--oidc-ca-file=" + provider.ca_file])
        except ClusterStartError as e:
            pytest.fail("local cluster did not start: %s" % e, pytrace=False)
        grant_groups(cluster)
        # A CSRF key the tests know: they open the sealed refresh cookie (test_kubeconfig).
        base.csrf_key = os.urandom(32)
        base.key_file = os.path.join(directory, "csrf-key")
        with open(base.key_file, "w") as f:
            f.write(base64.b64encode(base.csrf_key).decode())
        base.secret_file = os.path.join(directory, "client-secret")
        with open(base.secret_file, "w") as f:
            f.write(provider.client_secret)
        base.cluster = cluster
        base.authenticator_ready = False
        yield base
    finally:
        if cluster is not None:
            cluster.stop()
        provider.stop()


def authenticator_ready(base):
    """Returns once the trusting API server accepts ID tokens (once per package)."""
    if not base.authenticator_ready:
        _wait_oidc_authenticator(base.cluster, base.provider.issuer)
        base.authenticator_ready = True


@pytest.fixture(scope="module")
def oidc_setup(oidc_base):
    base = oidc_base
    web_root = base.web_root
    setup = Setup()
    setup.provider, setup.csrf_key = base.provider, base.csrf_key
    setup.url, setup.home_url = base.url(GATEWAY), base.url(HOME)
    cluster, gateway, home = base.cluster, None, None
    try:
        flags = base.flags()
        gateway = Gateway.start(cluster, "--web-root", web_root, "--web-ui-compat",
                                "--oidc-redirect-url", setup.url + "/oidc/callback", *flags,
                                port=base.ports[GATEWAY])
        # The gateway's own home page (no --web-root) offers sign-in with the provider too.
        home = Gateway.start(cluster, "--oidc-redirect-url", setup.home_url + "/oidc/callback",
                             *flags, port=base.ports[HOME])
        # Last: the gateways started meanwhile (they need no ID token).
        authenticator_ready(base)
        setup.cluster, setup.gateway, setup.home = cluster, gateway, home
        yield setup
    finally:
        for started in (gateway, home):
            if started is not None:
                started.stop()


__all__ = ["ACCOUNTS", "FLEET", "FLEET_HOME", "TEAMS", "authenticator_ready", "chromium_path",
           "grant_groups",
           "oidc_base", "oidc_setup"]
