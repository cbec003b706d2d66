"""Many clusters behind one gateway (issue #28): every route of one cluster is served under
``/clusters/{name}/``, the default cluster's also at the root.

``sources`` says which clusters are configured, ``context`` holds what belongs to one cluster,
``registry`` keeps them (started on first use, let go when idle, following the kubeconfig files).
"""

import re
import urllib.parse

PREFIX = "/clusters/"
_PATH = re.compile(r"^/clusters/([^/]+)(/.*)?$")


def split_path(path):
    """(cluster name, the path within the cluster) of a request path; (None, path) at the root
    (the default cluster). ``/clusters/a`` is (a, "/"). The name is percent-decoded: a link
    may spell ``arn:aws:...`` as ``arn%3Aaws%3A...``."""
    match = _PATH.match(path)
    if match is None:
        return None, path
    return urllib.parse.unquote(match.group(1)), match.group(2) or "/"


def base_path(name):
    """The path a cluster's pages and API are served under: ``/clusters/{name}/``; ``/`` for
    None (the default cluster at the root)."""
    return "/" if name is None else "%s%s/" % (PREFIX, name)
