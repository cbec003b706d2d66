"""GET /api/v1/cluster: which cluster this gateway serves, for a signed-in caller; GET
/api/v1/clusters: every cluster it serves (issue #28).

The home page (dashboard_api/web/home) shows it after sign-in. The API server's address is shown
only to a caller whose token that API server accepts: it is internal topology (often a private
address) that the gateway may be reachable from further than the API server is, so it is not
in the token-free ``/config``. The caller's token is checked the way sign-in checks it (GET
/version, refused with 401 when the token is bad), and the same answer gives the version.

The list of clusters checks the token the same way, with the cluster of the request's path
only: a token is never sent to another cluster. What it shows of the others (version,
reachability) comes from their background probes (clusters/probe.py), so a hung cluster never
makes the list wait. ``usable`` says whether the caller can use each cluster: for a person
signed in with the provider (whose ID token, the gateway's session, is meant for every
cluster), as each cluster answers within a few seconds (clusters/usable.py); for any other
token, ``true`` for the request's own cluster and ``null`` for the others.
"""

import urllib.parse

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.paths import base_path
from dashboard_api.serving.routes import Route


def public_address(host):
    """``scheme://host:port`` of the API server URL, without any user info or path."""
    parts = urllib.parse.urlsplit(host)
    if not parts.scheme or not parts.hostname:
        return host
    netloc = parts.hostname if ":" not in parts.hostname else "[%s]" % parts.hostname
    if parts.port:
        netloc += ":%d" % parts.port
    return "%s://%s" % (parts.scheme, netloc)


class ClusterHandler(BaseHandler):
    async def get(self):
        version = await self.caller().request("GET", "/version") or {}
        self.write_json({"apiServer": public_address(self.cluster.api.config.host),
                         "kubernetesVersion": str(version.get("gitVersion") or ""),
                         "platform": str(version.get("platform") or "")})


class ClustersHandler(BaseHandler):
    async def get(self):
        version = await self.caller().request("GET", "/version")
        self.cluster.probe.answered(version)
        usable = await self.usable()
        out = []
        for cluster in self.ctx.clusters:   # not marked used: their caches stay as they are
            cluster.probe.refresh()
            out.append({"name": cluster.name,
                        "server": public_address(cluster.api.config.host),
                        "version": cluster.probe.version,
                        "reachable": cluster.probe.reachable,
                        "cache": cluster.cache_state(),
                        "default": cluster.default,
                        "path": base_path(cluster.name),
                        "authMode": cluster.auth_mode,
                        "usable": usable.get(cluster.name)})
        self.write_json({"clusters": out})

    async def usable(self):
        """{cluster name: whether the caller can use it} (see the module doc)."""
        persons = self.ctx.persons
        person = self.person or (await persons.resolve_quietly(self.token())
                                 if persons is not None else None)
        if person is None:
            return {self.cluster.name: True}
        return await self.ctx.clusters.usability.of(self.ctx.clusters, self.token(), person)


ROUTES = [
    Route("/api/v1/cluster", ClusterHandler, "cluster",
          summary="The cluster served: {apiServer, kubernetesVersion, platform} "
                  "(the caller's token is checked with the API server)"),
    Route("/api/v1/clusters", ClustersHandler, "clusters",
          summary="Every cluster served: {clusters: [{name, server, version, reachable, cache, "
                  "default, path}]} (the caller's token is checked with the cluster of the "
                  "request's path only; version and reachability from a background probe)"),
]
