"""The certified OpenID provider of the tests (js/provider.mjs, the oidc-provider package) on
loopback over TLS with a certificate of a CA the tests make (tests/cluster/pki.py)."""

import json
import os
import time

from tests.cluster import pki as pki_mod
from tests.cluster.procs import Process, free_ports

JS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")
CLIENT_ID = "dashboard"
ACCOUNTS = {
    "alice": {"email": "alice@example.com", "groups": ["oidc-team-a"]},
    "bob": {"email": "bob@example.com", "groups": ["oidc-team-b"]},
}


class OpenIdProvider:
    """``issuer``, ``ca_file`` (the CA of its TLS certificate), ``client_secret``; ``stop``."""

    def __init__(self, directory, gateways, id_token_ttl):
        """``gateways``: the URLs of the gateways that sign people in with it."""
        assert os.path.isdir(os.path.join(JS_DIR, "node_modules", "oidc-provider")), \
            "run bin/bootstrap: it installs oidc-provider (npm ci in tests/oidc/js)"
        pki = pki_mod.create(os.path.join(directory, "oidc-pki"))
        self.ca_file = pki.ca_cert
        [port] = free_ports(1)
        self.issuer = "https://127.0.0.1:%d" % port
        self.client_secret = os.urandom(16).hex()
        self.log_path = os.path.join(directory, "oidc-provider.log")
        env = dict(os.environ, OIDC_ISSUER=self.issuer, OIDC_PORT=str(port),
                   OIDC_TLS_CERT=pki.apiserver_cert, OIDC_TLS_KEY=pki.apiserver_key,
                   OIDC_CLIENT_ID=CLIENT_ID, OIDC_CLIENT_SECRET=self.client_secret,
                   OIDC_REDIRECT_URIS=" ".join(g + "/oidc/callback" for g in gateways),
                   OIDC_POST_LOGOUT_URIS=" ".join(g + "/oidc/logout" for g in gateways),
                   OIDC_ID_TOKEN_TTL=str(id_token_ttl), OIDC_ACCOUNTS=json.dumps(ACCOUNTS))
        self.proc = Process("oidc-provider", ["node", "provider.mjs"], self.log_path, env=env,
                            cwd=JS_DIR)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.exit_code() is not None:
                raise RuntimeError("oidc-provider exited:\n" + self.log())
            if "ready" in self.log():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("oidc-provider did not listen within 20s:\n" + self.log())

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-4000:]

    def stop(self):
        self.proc.stop()
