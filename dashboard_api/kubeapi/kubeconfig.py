"""Kubeconfig files, read as kubectl reads them: their contexts, and the connection one names.

A path may list several files (joined by ':', as ``KUBECONFIG``); they merge as kubectl merges
them: the first file naming a context, cluster or user wins, and so does the first file setting
``current-context``. A relative path inside a file (``certificate-authority``, ``tokenFile``) is
relative to that file's folder. Certificates given inline (``*-data``) are written once to
private temporary files, removed when the process exits: TLS contexts load certificates from
files.
"""

import atexit
import base64
import binascii
import hashlib
import os
import tempfile

import yaml

from dashboard_api.kubeapi import connection as conn
from dashboard_api.kubeapi.connection import ConfigError

# What the plain reader leaves to the kubernetes package: credentials a command or a provider
# gives, and basic authentication.
LIBRARY_USER_KEYS = ("exec", "auth-provider", "username", "password")


def contexts(path):
    """(contexts, current context or None) of ``path``. Each context is ``{"name", "context",
    "_sections": (cluster, user), "_dirs": (cluster's folder, user's folder)}``, the sections
    as the files give them (None when the context names one no file has). A file without
    ``current-context`` is fine (the kubernetes package refuses it)."""
    merged = {"contexts": {}, "clusters": {}, "users": {}}
    current = None
    try:
        for folder, doc in _documents(path):
            for key, named in merged.items():
                for item in doc.get(key) or ():
                    if isinstance(item, dict) and isinstance(item.get("name"), str):
                        named.setdefault(item["name"], (item, folder))
            current = current or doc.get("current-context") or None
    except (OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as exc:
        raise ConfigError("cannot load cluster configuration from %s: %s" % (path, exc)) from exc
    found = []
    for name, (item, _) in merged["contexts"].items():
        named = item.get("context") if isinstance(item.get("context"), dict) else {}
        cluster, cluster_dir = merged["clusters"].get(named.get("cluster"), (None, None))
        user, user_dir = merged["users"].get(named.get("user"), (None, None))
        found.append({"name": name, "context": named, "_sections": (cluster, user),
                      "_dirs": (cluster_dir, user_dir)})
    chosen = [c for c in found if c["name"] == current]
    return found, chosen[0] if chosen else None


def _documents(path):
    """(folder, document) of each file of ``path``; files that do not exist are skipped in a
    list, as kubectl does, but at least one must be read."""
    paths = [os.path.expanduser(p) for p in path.split(os.pathsep) if p]
    present = [p for p in paths if os.path.exists(p)] if len(paths) > 1 else paths
    if not present:
        raise ValueError("no such file")
    docs = []
    for one in present:
        with open(one, "rb") as f:
            # An operator's own configuration, not a request's: read with the safe loader.
            doc = yaml.safe_load(f) or {}
        if not isinstance(doc, dict):
            raise ValueError("%s is not a kubeconfig (a mapping)" % one)
        docs.append((os.path.dirname(os.path.abspath(one)), doc))
    return docs


def connection(path, context=None):
    """The ``kubeapi.connection.Connection`` of ``context`` in ``path`` (its current context
    when None). Raises ConfigError when there is no such context or it cannot be used."""
    found, current = contexts(path)
    wanted = context or (current or {}).get("name")
    chosen = [c for c in found if c["name"] == wanted]
    if not chosen:
        raise ConfigError("cannot load cluster configuration from %s: no context %s"
                          % (path, wanted or "(current-context is not set)"))
    (cluster, user), (cluster_dir, user_dir) = chosen[0]["_sections"], chosen[0]["_dirs"]
    cluster = _section(cluster, "cluster")
    user = _section(user, "user")
    if any(key in user for key in LIBRARY_USER_KEYS):
        try:
            return conn.of_library(path, wanted)
        except Exception as exc:  # the package's loaders raise several unrelated types
            raise ConfigError("cannot load cluster configuration from %s: %s"
                              % (path, exc)) from exc
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise ConfigError("cannot load cluster configuration from %s: context %s has no "
                          "cluster server" % (path, wanted))
    tls = server.startswith("https")
    token_file = _path(user.get("tokenFile"), user_dir)
    token = user.get("token") if not token_file else None
    return conn.Connection(
        server,
        verify_ssl=not cluster.get("insecure-skip-tls-verify", False),
        ssl_ca_cert=_file_or_data(cluster, "certificate-authority", cluster_dir) if tls else None,
        cert_file=_file_or_data(user, "client-certificate", user_dir) if tls else None,
        key_file=_file_or_data(user, "client-key", user_dir) if tls else None,
        tls_server_name=cluster.get("tls-server-name") or None,
        proxy=cluster.get("proxy-url") or conn.environment_proxy(server),
        token=str(token) if token else None, token_file=token_file)


def _section(item, key):
    value = item.get(key) if isinstance(item, dict) else None
    return value if isinstance(value, dict) else {}


def _path(value, folder):
    if not value:
        return None
    value = os.path.expanduser(str(value))
    return value if os.path.isabs(value) or not folder else os.path.join(folder, value)


def _file_or_data(section, key, folder):
    """The path of ``key`` (relative to its file's folder), else of its ``key-data`` (base64)
    written to a private temporary file, else None."""
    if section.get(key):
        return _path(section[key], folder)
    data = section.get(key + "-data")
    if not data:
        return None
    try:
        content = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise ConfigError("%s-data is not base64" % key) from exc
    return _written(content)


_WRITTEN = {}   # digest of the content -> its temporary file


def _written(content):
    digest = hashlib.sha256(content).hexdigest()
    path = _WRITTEN.get(digest)
    if path and os.path.exists(path):
        return path
    fd, path = tempfile.mkstemp(prefix="dashboard-api-", suffix=".pem")   # mode 0600
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    if not _WRITTEN:
        atexit.register(_remove_written)
    _WRITTEN[digest] = path
    return path


def _remove_written():
    for path in _WRITTEN.values():
        try:
            os.unlink(path)
        except OSError:
            pass
