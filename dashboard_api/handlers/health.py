"""GET /healthz (the process serves) and GET /readyz (send it traffic), for probes and load
balancers: no token, plain text, nothing but in-memory state, never logged at info level."""

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.routes import Route

PLAIN = "text/plain; charset=UTF-8"


class HealthHandler(BaseHandler):
    def get(self):
        self.set_header("Content-Type", PLAIN)
        self.finish("ok\n")


class ReadyHandler(BaseHandler):
    def get(self):
        lifecycle = self.ctx.lifecycle
        ready, why = lifecycle.ready() if lifecycle is not None else (True, "ok")
        self.set_status(200 if ready else 503)
        self.set_header("Content-Type", PLAIN)
        self.finish(why + "\n")


ROUTES = [
    Route("/healthz", HealthHandler, "healthz", auth=False,
          summary="Liveness: 200 while the process serves"),
    Route("/readyz", ReadyHandler, "readyz", auth=False,
          summary="Readiness: 200 once the API server answered and the watch cache synced; "
                  "503 while syncing or shutting down"),
]
