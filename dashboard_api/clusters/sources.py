"""Which clusters the gateway serves: every context of the kubeconfig files, ``--cluster``
entries, or the pod's own cluster.

A cluster is named by its kubeconfig context (``--cluster NAME=...`` names its own; in a pod
without --kubeconfig, the pod's cluster is ``in-cluster``, --cluster entries beside it). The
name is a path segment (``/clusters/{name}/``), so characters a path segment cannot carry
plainly become ``-``.

Each entry carries a fingerprint of what it connects with (server, CA, credentials), so that a
re-read of the files tells a changed cluster from an unchanged one without keeping secrets.
"""

import hashlib
import json
import os
import re

from dashboard_api.kubeapi import config as cluster_config
from dashboard_api.kubeapi import kubeconfig as kubeconfig_files

IN_CLUSTER = "in-cluster"
FLAGS_ONLY = "default"  # the name of the one cluster of --apiserver-host without a kubeconfig
_UNSAFE = re.compile(r"[^A-Za-z0-9._@:~-]")


class Entry:
    """One cluster as configured: ``kubeconfig`` (None: in-cluster or flags only) and
    ``context`` within it; ``fingerprint`` changes when what it connects with changes."""

    def __init__(self, name, kubeconfig=None, context=None, fingerprint=""):
        self.name = name
        self.kubeconfig = kubeconfig
        self.context = context
        self.fingerprint = fingerprint

    def __repr__(self):
        return "Entry(%r, %r, %r)" % (self.name, self.kubeconfig, self.context)


def path_name(name):
    """``name`` as a path segment: characters outside [A-Za-z0-9._@:~-] become ``-``."""
    name = _UNSAFE.sub("-", name)[:100]
    return "-" + name if name in ("", ".", "..") else name


def parse_cluster_flag(text):
    """``NAME=KUBECONFIG[:CONTEXT]`` -> (name, kubeconfig, context or None); raises
    cluster_config.ConfigError (the start-up says why and exits) when it is not that."""
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest.partition(":")[0]:
        raise cluster_config.ConfigError("--cluster %s: expected NAME=KUBECONFIG[:CONTEXT]"
                                         % text[:200])
    path, _, context = rest.partition(":")
    return name, path, context or None


def read(options):
    """(entries in order, the default cluster's name). Raises cluster_config.ConfigError when a
    file cannot be read or two clusters would share a name."""
    entries = []
    default = None
    if options.kubeconfig:
        contexts, current = kubeconfig_files.contexts(options.kubeconfig)
        for context in contexts:
            entries.append(Entry(path_name(context["name"]), options.kubeconfig,
                                 context["name"], _fingerprint(context)))
        if current:
            default = path_name(current["name"])
    elif options.apiserver_host:
        entries.append(Entry(FLAGS_ONLY))
    elif not getattr(options, "clusters", None) or in_pod():
        # In a pod, --cluster entries are served beside the pod's own cluster (the default
        # unless --default-cluster says otherwise).
        entries.append(Entry(IN_CLUSTER))
    for flag in getattr(options, "clusters", None) or ():
        name, path, context_name = parse_cluster_flag(flag)
        contexts, current = kubeconfig_files.contexts(path)
        wanted = context_name or (current or {}).get("name")
        chosen = [c for c in contexts if c["name"] == wanted]
        if not chosen:
            raise cluster_config.ConfigError("--cluster %s: no context %s in %s" % (
                name, context_name or "(current)", path))
        entries.append(Entry(path_name(name), path, chosen[0]["name"],
                             _fingerprint(chosen[0])))
    seen = set()
    for entry in entries:
        if entry.name in seen:
            raise cluster_config.ConfigError(
                "two clusters are named %s: name them apart (--cluster NAME=...)" % entry.name)
        seen.add(entry.name)
    wanted = getattr(options, "default_cluster", None)
    if wanted:
        wanted = path_name(wanted)  # a context's name as kubectl spells it, or its path name
        if wanted not in seen:
            raise cluster_config.ConfigError("--default-cluster %s: no such cluster (%s)" % (
                wanted, ", ".join(e.name for e in entries)))
        default = wanted
    if default not in seen:
        default = entries[0].name if entries else None
    if default is None:
        raise cluster_config.ConfigError("no cluster: the kubeconfig has no context")
    return entries, default


FORWARD, IMPERSONATE = "forward", "impersonate"
AUTH_MODES = (FORWARD, IMPERSONATE)


def auth_modes(options, entries, default):
    """{cluster name: identity mode} from the ``--cluster-auth [NAME=]forward|impersonate``
    flags (a bare mode is the default cluster's; a NAME is a context's name as kubectl spells
    it, or its path name); clusters not named are ``forward``. Raises
    cluster_config.ConfigError for a malformed flag, an unknown mode or a cluster not served:
    a misspelt name would leave a cluster in another mode than meant."""
    names = {e.name for e in entries}
    modes = {}
    for flag in getattr(options, "cluster_auth", None) or ():
        name, sep, mode = flag.rpartition("=")
        name = path_name(name) if sep else default
        if mode not in AUTH_MODES:
            raise cluster_config.ConfigError("--cluster-auth %s: the mode is forward or "
                                             "impersonate" % flag[:200])
        if name not in names:
            raise cluster_config.ConfigError("--cluster-auth %s: no such cluster (%s)" % (
                flag[:200], ", ".join(sorted(names))))
        modes[name] = mode
    return modes


def in_pod():
    """Whether the process runs in a pod (the variables the in-cluster configuration reads)."""
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")
                and os.environ.get("KUBERNETES_SERVICE_PORT"))


def load(entry, options, default):
    """The kubeapi.config.ClusterConfig of ``entry``. --apiserver-host, --apiserver-ca-bundle
    and --apiserver-skip-tls-verify apply to the default cluster only."""
    return cluster_config.load(options, kubeconfig=entry.kubeconfig, context=entry.context,
                               overrides=default)


def _fingerprint(context):
    """A digest of the context and the cluster and user sections it names: it changes when the
    address, CA or credentials of that cluster change, not when another context is added."""
    return hashlib.sha256(json.dumps(context, sort_keys=True, default=str).encode()).hexdigest()
