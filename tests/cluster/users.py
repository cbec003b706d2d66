"""The static-token users of the local cluster and the admin kubeconfig.

Tokens are random per cluster start; files holding them are written mode 0600.
"""
import base64
import json
import os
import secrets

import yaml

# name -> groups. The controller-manager runs as a master because it does not use
# per-controller service-account credentials (that would slow the start down).
USERS = {
    "admin": ["system:masters"],
    "editor": [],
    "nobody": [],
    # A static token shaped as a JWT whose ``exp`` has passed: the API server takes it as the
    # opaque string it is, as it took an ID token before it expired; the gateway, which reads
    # ``exp`` while the API server is away, must refuse it then (tests/faults/test_outage.py).
    "expired": [],
    "system:kube-controller-manager": ["system:masters"],
    "system:kube-scheduler": [],
}


def _write_private(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def new_tokens():
    tokens = {name: secrets.token_urlsafe(32) for name in USERS}
    tokens["expired"] = expired_jwt("expired")
    return tokens


def expired_jwt(sub):
    """A JWT-shaped token (unsigned: a random third part) whose ``exp`` is long past."""
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return ".".join((part({"alg": "RS256", "typ": "JWT"}),
                     part({"sub": sub, "iat": 1000000000, "exp": 1000000600,
                           "nonce": secrets.token_hex(8)}),
                     secrets.token_urlsafe(32)))


def write_token_file(path, tokens):
    """The apiserver's --token-auth-file: token,user,uid,"group1,group2"."""
    lines = []
    for uid, (name, groups) in enumerate(USERS.items(), start=1):
        line = f"{tokens[name]},{name},uid-{uid}"
        if groups:
            line += ',"' + ",".join(groups) + '"'
        lines.append(line)
    _write_private(path, "\n".join(lines) + "\n")


def write_secret(path, token):
    """A file holding only one token, for processes taking --token-file."""
    _write_private(path, token)


def write_kubeconfig(path, server, ca_file, user, token):
    write_contexts(path, {"local": (server, ca_file, user, token)}, "local")


def write_contexts(path, contexts, current):
    """A kubeconfig of several contexts: ``contexts`` maps a context's name to (server,
    ca_file, user, token); each context has a cluster and a user of its own name, so two
    contexts may name the same user (e.g. "admin") with different tokens."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, "certificate-authority": ca}}
                     for name, (server, ca, _user, _token) in contexts.items()],
        "users": [{"name": name + "-" + user, "user": {"token": token}}
                  for name, (_server, _ca, user, token) in contexts.items()],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name + "-" + user}}
                     for name, (_server, _ca, user, _token) in contexts.items()],
        "current-context": current,
    }
    _write_private(path, yaml.safe_dump(config, sort_keys=False))
