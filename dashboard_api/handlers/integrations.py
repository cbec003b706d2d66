"""Integration health: GET /api/v1/integration/{integrationId}/health and .../state.

The only integration is the metrics sidecar (id ``sidecar``). It does not exist in --proxy mode
or with --metrics-provider none (404). Both routes answer from the periodic health check's last
result, never from a check of their own: ``state`` needs no token, and a check through the
service proxy runs under the service's identity. ``health`` needs the Bearer header and answers the specification's
integration health record {healthy, message} either way: 200 when the sidecar is healthy, 503
when it is not. The 503 is the specification's "metrics sidecar unreachable" error (its body's
``status``, ``message`` and ``code``, no ``reason``) carrying ``healthy: false`` as well, so a
client reading the record and one reading the error both understand it, and monitors and load
balancers see the outage from the status alone. ``state`` is upstream's token-free route:
{connected, lastChecked, error}.
"""

from dashboard_api.serving.errors import not_found
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.routes import Route

SIDECAR = "sidecar"


class _IntegrationBase(BaseHandler):
    def integration(self, integration_id):
        if integration_id != SIDECAR:
            raise not_found("integration %s does not exist" % integration_id)
        client = self.cluster.sidecar
        if client is None:
            raise not_found("integration %s is not enabled (proxy mode or --metrics-provider "
                            "none)" % integration_id)
        return client


class HealthHandler(_IntegrationBase):
    async def get(self, integrationId):
        self.token()
        client = self.integration(integrationId)
        await client.first_check()
        if client.healthy:
            self.write_json({"healthy": True, "message": "the metrics sidecar is healthy"})
            return
        self.write_json({"healthy": False, "message": client.last_error or "not checked yet",
                         "status": "Failure", "code": 503}, 503)


class StateHandler(_IntegrationBase):
    async def get(self, integrationId):
        client = self.integration(integrationId)
        await client.first_check()
        checked = client.last_checked
        self.write_json({
            "connected": client.healthy,
            "lastChecked": checked.strftime("%Y-%m-%dT%H:%M:%SZ") if checked else None,
            "error": None if client.healthy else client.last_error,
        })


ROUTES = [
    Route("/api/v1/integration/{integrationId}/health", HealthHandler, "integration-health",
          summary="Health of an integration (sidecar): {healthy, message}; 503 with "
                  "healthy false (and the error's status and code) when unhealthy"),
    Route("/api/v1/integration/{integrationId}/state", StateHandler, "integration-state",
          auth=False, summary="State of an integration at its last health check: "
                               "{connected, lastChecked, error}"),
]
