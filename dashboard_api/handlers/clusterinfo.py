"""GET /api/v1/cluster: which cluster this gateway serves, for a signed-in caller.

The home page (dashboard_api/home) shows it after sign-in. The API server's address is shown
only to a caller whose token that API server accepts: it is internal topology (often a private
address) that the gateway may be reachable from further than the API server is, so it is not
in the token-free ``/config``. The caller's token is checked the way sign-in checks it (GET
/version, refused with 401 when the token is bad), and the same answer gives the version.
"""

import urllib.parse

from dashboard_api.handlers.base import BaseHandler
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


ROUTES = [
    Route("/api/v1/cluster", ClusterHandler, "cluster",
          summary="The cluster served: {apiServer, kubernetesVersion, platform} "
                  "(the caller's token is checked with the API server)"),
]
