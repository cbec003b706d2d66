"""Builds the Tornado application of the gateway from the options and the route table.

The gateway routes by path to the components of the running mode: ``dashboard`` serves the API,
authentication and web routes (and the UI files with --web-root); ``api`` serves only the API
component's routes. The metrics sidecar is a process of its own, reached by its URL.
"""

import logging
import re

import tornado.web

from dashboard_api.app import routes as route_table
from dashboard_api.app.context import Context
from dashboard_api import audit
from dashboard_api.audit.trail import AuditCollector
from dashboard_api.auth import oidc, persons
from dashboard_api.auth.csrf import CsrfGuard, CsrfTokens, load_key
from dashboard_api.cache.foreground import FOREGROUND
from dashboard_api.cache.telemetry import CacheCollector
from dashboard_api.handlers import home, picker, static
from dashboard_api.handlers.base import NotFoundHandler, UnknownClusterHandler
from dashboard_api.serving import (bodylimit, connections, dispatch, lifecycle, looplag, proxies,
                                   requestlog, routes)
from dashboard_api.serving.paths import split_path
from dashboard_api.terminal import endpoint as terminal
from dashboard_api.web import locales

log = logging.getLogger("dashboard_api")

DEFAULT_MAX_BODY = 4 << 20  # --max-body-size's default, for contexts built without flags
COMPONENTS = {"dashboard": ("api", "auth", "web"), "api": ("api",)}


def served_routes(mode, features=()):
    """The routes of ``mode``'s components, those of optional features only when named in
    ``features`` (``oidc`` with --oidc-issuer-url)."""
    return [r for r in route_table.all_routes() if r.component in COMPONENTS[mode]
            and (r.feature is None or r.feature in features)]


class Application(tornado.web.Application):
    dispatch = None   # the routes by head (serving/dispatch.py), made at the first request

    def start_request(self, server_conn, request_conn):
        # Every request passes the body size limit before the router sees its body.
        connections.harden_headers(request_conn)
        return bodylimit.BodyLimit(super().start_request(server_conn, request_conn),
                                   request_conn, max_body_size(self.ctx.options),
                                   self.route_limits, self.ctx.lifecycle.request_finished)

    def find_handler(self, request, **kwargs):
        # Called once per request as soon as its headers are in: the "Incoming" log line.
        requestlog.incoming(request)
        looplag.request_started(request)  # names the request in slow-step warnings
        self.ctx.lifecycle.request_started()
        FOREGROUND.arrived()   # background index builds step aside a moment (cache/foreground)
        # /clusters/{name}/... is routed as the path within that cluster by the one route
        # table; the request keeps its full path (cookies are scoped to it) and its cluster.
        name, inner = split_path(request.path)
        request.cluster_name = name
        request.cluster = self.ctx.clusters.get(name)
        if request.cluster is None:
            return self.get_handler_delegate(request, UnknownClusterHandler)
        if name is None:
            return self._routed(request, **kwargs)
        full = request.path
        request.path = inner
        try:
            return self._routed(request, **kwargs)
        finally:
            request.path = full

    def _routed(self, request, **kwargs):
        """Tornado's choice of handler, tried among the routes that could match the path
        (serving/dispatch.py) when it knows them."""
        if self.dispatch is None:
            self.dispatch = dispatch.Dispatch(self.wildcard_router.rules)
        for rule in self.dispatch.candidates(request.path) or ():
            params = rule.matcher.match(request)
            if params is None:
                continue
            if isinstance(rule.target, type) and \
                    issubclass(rule.target, tornado.web.RequestHandler):
                return self.get_handler_delegate(request, rule.target, rule.target_kwargs,
                                                 params.get("path_args"),
                                                 params.get("path_kwargs"))
            break   # another kind of target: Tornado's own way
        return super().find_handler(request, **kwargs)

    def log_request(self, handler):
        # Called once per finished response (for a websocket: its upgrade).
        self.ctx.lifecycle.request_finished()
        super().log_request(handler)


def max_body_size(options):
    return getattr(options, "max_body_size", DEFAULT_MAX_BODY)


def make_app(ctx):
    specs = routes.url_specs(ctx.routes or served_routes(ctx.options.mode))
    # /api/sockjs, ahead of any catch-all; a connection binds the ids of its path's cluster.
    specs[:0] = terminal.sockjs_urls(ctx.clusters.sessions_of, proxies=proxies.of(ctx.options),
                                     secret=ctx.clusters.secret)
    if "web" in COMPONENTS[ctx.options.mode]:
        # The page to pick a cluster (/clusters/), then the web UI's files with --web-root,
        # else the gateway's own home page (with several clusters, / serves the picker too).
        specs.append(picker.url_spec())
        specs.append(static.url_spec(ctx.options.web_root) if ctx.options.web_root
                     else home.url_spec())
    # The terminal's websocket frames are bounded like bodies (xhr_send is a body already).
    app = Application(specs, default_handler_class=NotFoundHandler, compress_response=True,
                      log_function=requestlog.outgoing,
                      websocket_max_message_size=max_body_size(ctx.options))
    app.ctx = ctx
    # Per method: a path's list (GET) and its create (POST) may be one merged handler. The
    # limits match the path within a cluster, as the routes do (bodylimit.py).
    app.route_limits = [(method.upper(), re.compile(r.regex()), r.max_body)
                        for r in (ctx.routes or served_routes(ctx.options.mode))
                        if r.max_body for method in r.methods()]
    return app


def make_context(options, clusters, telemetry):
    """The process's context over ``clusters`` (clusters.registry.Clusters, loaded). Raises
    CsrfKeyError, LocaleConfigError or OidcConfigError when those flags are unusable."""
    key = clusters.secret
    csrf = CsrfGuard(CsrfTokens(key, options.csrf_token_ttl), enabled=not options.disable_csrf)
    if telemetry is not None:
        telemetry.registry.register(CacheCollector(clusters))
    signin = oidc.make(options, key)
    if clusters.impersonating() and signin is None:
        raise oidc.OidcConfigError("--cluster-auth impersonate needs --oidc-issuer-url: the "
                                   "gateway names only people whose ID token it verified")
    if clusters.impersonating() and options.proxy:
        raise oidc.OidcConfigError("--cluster-auth impersonate needs the cluster's own "
                                   "credentials, which --proxy leaves out")
    trail = audit.make(options)
    if telemetry is not None and trail is not None:
        telemetry.registry.register(AuditCollector(trail))
    people = persons.make(signin, options)
    clusters.attach_audit(trail.record if trail is not None else None, people)
    return Context(options, telemetry, clusters, csrf=csrf,
                   routes=served_routes(options.mode, ("oidc",) if signin else ()),
                   locales=locales.load(options.locale_config),
                   lifecycle=lifecycle.Lifecycle(clusters.default.cache), oidc=signin,
                   persons=people, audit=trail)


def load_secret(options):
    """The CSRF key (also what terminal ids and owner cookies are sealed under); raises
    CsrfKeyError when the flags name an unusable one."""
    key, source = load_key(options.csrf_key, options.csrf_key_file)
    if source == "--csrf-key":
        log.warning("--csrf-key puts the CSRF key on the command line, where every local user "
                    "can read it (ps, /proc): prefer --csrf-key-file or $CSRF_KEY")
    if source == "random" and not options.disable_csrf:
        log.warning("no CSRF key given (--csrf-key, --csrf-key-file or $CSRF_KEY): using a "
                    "random one, so other replicas will refuse this one's CSRF tokens and "
                    "terminal session ids")
    return key
