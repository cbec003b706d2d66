"""Web-facing records and operational endpoints: /config, system banner, locales, /metrics,
/apidocs.json. None of them needs a token."""

import time

from dashboard_api.cache import outage
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving import telemetry
from dashboard_api.serving.bearer import bearer_token
from dashboard_api.serving.errors import not_found
from dashboard_api.serving.routes import Route
from dashboard_api.version import VERSION
from dashboard_api.web.pages import TOKEN_COOKIE

AUTHENTICATION_MODE = "token"
SEVERITIES = ("INFO", "WARNING", "ERROR")


def authentication_modes(ctx):
    """How a person may sign in here: a token and a kubeconfig always, an OpenID Connect
    provider when one is configured (its sign-in starts at /oidc/login)."""
    return ["token", "kubeconfig"] + (["oidc"] if getattr(ctx, "oidc", None) else [])


class ConfigHandler(BaseHandler):
    def get(self):
        # authenticationMode is the specification's field, kept as it was for the upstream UI;
        # authenticationModes (issue 29) lists every way in.
        self.write_json({"serverTime": int(time.time() * 1000), "version": VERSION,
                         "authenticationMode": AUTHENTICATION_MODE,
                         "authenticationModes": authentication_modes(self.ctx)})


class SystemBannerHandler(BaseHandler):
    """The configured banner; while the cluster's API server does not answer, a warning that
    says since when and that lists show what was last seen, to a caller the API server has
    answered before (the upstream web UI sends its token cookie here, the home page its
    Authorization header): those are the people still shown lists then; the configured banner
    again once it answers."""

    def get(self):
        options = self.ctx.options
        severity = (options.system_banner_severity or "").upper()
        banner = {"message": options.system_banner or "",
                  "severity": severity if severity in SEVERITIES else "INFO"}
        since = self.cluster.unanswered_since() if self.cluster is not None else None
        if since is not None and self._known_caller():
            banner = {"message": outage.described(since), "severity": "WARNING"}
        self.write_json(banner)

    def _known_caller(self):
        token = bearer_token(self.request.headers.get("Authorization")) or \
            self.get_cookie(TOKEN_COOKIE)
        return bool(token) and self.cluster.access().knows(token)


class LocaleHandler(BaseHandler):
    def get(self):
        self.write_json({"locales": [{"id": i, "name": n} for i, n in self.ctx.locales]})


class MetricsHandler(BaseHandler):
    def get(self):
        self.set_header("Content-Type", telemetry.CONTENT_TYPE)
        self.finish(self.ctx.telemetry.exposition())


class OpenApiHandler(BaseHandler):
    def get(self):
        if not self.ctx.options.enable_openapi:
            raise not_found("the OpenAPI description is served only with --enable-openapi")
        self.write_json(self.ctx.openapi())


ROUTES = [
    Route("/config", ConfigHandler, "config", component="web", auth=False,
          summary="Server time (ms), version, authentication mode and the sign-in modes "
                  "offered (token, kubeconfig, oidc)"),
    Route("/systembanner", SystemBannerHandler, "systembanner", component="web", auth=False,
          summary="The system banner {message, severity}"),
    Route("/api/v1/systembanner", SystemBannerHandler, "api-systembanner", auth=False,
          summary="The system banner {message, severity}"),
    Route("/api/v1/locale", LocaleHandler, "locale", auth=False,
          summary="Locales of the web UI {locales: [{id, name}]}"),
    Route("/metrics", MetricsHandler, "metrics", auth=False,
          summary="Prometheus text exposition of the request series"),
    Route("/apidocs.json", OpenApiHandler, "apidocs", auth=False,
          summary="This OpenAPI description (only with --enable-openapi)"),
]
