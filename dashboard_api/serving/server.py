"""Builds the Tornado application of the gateway from the options and the route table.

The gateway routes by path to the components of the running mode: ``dashboard`` serves the API,
authentication and web routes (and the UI files with --web-root); ``api`` serves only the API
component's routes. The metrics sidecar is a process of its own, reached by its URL.
"""

import logging
import re

import tornado.web

from dashboard_api import locales, terminal
from dashboard_api.serving import (bodylimit, connections, lifecycle, looplag, proxies,
                                   requestlog, routes)
from dashboard_api.auth import oidc
from dashboard_api.auth.csrf import CsrfGuard, CsrfTokens, load_key
from dashboard_api.cache import WatchCache
from dashboard_api.cache.access import Access
from dashboard_api.cache.passthrough import ChunkedList, ListSlots
from dashboard_api.cache.source import CacheSource, NamespaceCandidates
from dashboard_api.cache.telemetry import CacheCollector
from dashboard_api.serving.context import Context
from dashboard_api.handlers import home, static
from dashboard_api.handlers.base import NotFoundHandler
from dashboard_api.handlers.settings import SettingsStore
from dashboard_api.listing import Pipeline
from dashboard_api.metrics import lists as metric_lists
from dashboard_api.metrics.sidecar import SidecarClient
from dashboard_api.metrics.sidecar import read_token as read_sidecar_token

log = logging.getLogger("dashboard_api")

DEFAULT_MAX_BODY = 4 << 20  # --max-body-size's default, for contexts built without flags
COMPONENTS = {"dashboard": ("api", "auth", "web"), "api": ("api",)}


def served_routes(mode, features=()):
    """The routes of ``mode``'s components, those of optional features only when named in
    ``features`` (``oidc`` with --oidc-issuer-url)."""
    return [r for r in routes.all_routes() if r.component in COMPONENTS[mode]
            and (r.feature is None or r.feature in features)]


class Application(tornado.web.Application):
    def start_request(self, server_conn, request_conn):
        # Every request passes the body size limit before the router sees its body.
        connections.harden_headers(request_conn)
        return bodylimit.BodyLimit(super().start_request(server_conn, request_conn),
                                   request_conn, max_body_size(self.ctx.options),
                                   self.route_limits)

    def find_handler(self, request, **kwargs):
        # Called once per request as soon as its headers are in: the "Incoming" log line.
        requestlog.incoming(request)
        looplag.request_started(request)  # names the request in slow-step warnings
        self.ctx.lifecycle.request_started()
        return super().find_handler(request, **kwargs)

    def log_request(self, handler):
        # Called once per finished response (for a websocket: its upgrade).
        self.ctx.lifecycle.request_finished()
        super().log_request(handler)


def max_body_size(options):
    return getattr(options, "max_body_size", DEFAULT_MAX_BODY)


def make_app(ctx):
    specs = routes.url_specs(ctx.routes or served_routes(ctx.options.mode))
    specs[:0] = terminal.sockjs_urls(ctx.terminals,  # /api/sockjs, ahead of any catch-all
                                     proxies=proxies.of(ctx.options))
    if "web" in COMPONENTS[ctx.options.mode]:
        # The web UI's files with --web-root, else the gateway's own home page.
        specs.append(static.url_spec(ctx.options.web_root) if ctx.options.web_root
                     else home.url_spec())
    # The terminal's websocket frames are bounded like bodies (xhr_send is a body already).
    app = Application(specs, default_handler_class=NotFoundHandler, compress_response=True,
                      log_function=requestlog.outgoing,
                      websocket_max_message_size=max_body_size(ctx.options))
    app.ctx = ctx
    # Per method: a path's list (GET) and its create (POST) may be one merged handler.
    app.route_limits = [(method.upper(), re.compile(r.regex()), r.max_body)
                        for r in (ctx.routes or served_routes(ctx.options.mode))
                        if r.max_body for method in r.methods()]
    return app


def make_sidecar(options, cluster):
    """The sidecar client, or None where the metrics integration is off."""
    if options.proxy or options.metrics_provider == "none":
        return None
    token_file = getattr(options, "sidecar_token_file", None)
    return SidecarClient(cluster, options.sidecar_host, options.namespace,
                         options.metrics_scraper_service_name,
                         options.metric_client_check_period,
                         token=read_sidecar_token(token_file) if token_file else None)


def make_context(options, cluster, telemetry):
    """Raises CsrfKeyError, LocaleConfigError or OidcConfigError when those flags are
    unusable."""
    key, source = load_key(options.csrf_key, options.csrf_key_file)
    if source == "--csrf-key":
        log.warning("--csrf-key puts the CSRF key on the command line, where every local user "
                    "can read it (ps, /proc): prefer --csrf-key-file or $CSRF_KEY")
    if source == "random" and not options.disable_csrf:
        log.warning("no CSRF key given (--csrf-key, --csrf-key-file or $CSRF_KEY): using a "
                    "random one, so other replicas will refuse this one's CSRF tokens and "
                    "terminal session ids")
    csrf = CsrfGuard(CsrfTokens(key, options.csrf_token_ttl), enabled=not options.disable_csrf)
    settings = SettingsStore(cluster, options.namespace, options.settings_config_map_name)
    cache, source = make_source(options, cluster, settings)
    if telemetry is not None and cache is not None:
        telemetry.registry.register(CacheCollector(cache, source.access))
    sidecar = make_sidecar(options, cluster)
    pipeline = make_pipeline(source, sidecar, web_ui=options.web_ui_compat)
    signin = oidc.make(options, key)
    return Context(options, cluster, telemetry, csrf=csrf, settings=settings,
                   sidecar=sidecar, routes=served_routes(options.mode,
                                                         ("oidc",) if signin else ()),
                   locales=locales.load(options.locale_config), source=source, cache=cache,
                   terminals=terminal.make_sessions(cluster, key),
                   lifecycle=lifecycle.Lifecycle(cache), pipeline=pipeline,
                   oidc=signin)


def make_source(options, cluster, settings):
    """(the watch cache or None, the list source): the cache unless it is turned off or the
    service has no identity of its own (--proxy); pass-through lists are bounded either way."""
    use_cache = options.watch_cache and not options.proxy
    cache = WatchCache(cluster, opt_in=options.watch_cache_opt_in,
                       idle=options.watch_idle_timeout) if use_cache else None
    candidates = NamespaceCandidates(cluster, settings, cache)
    passthrough = ChunkedList(
        slots=ListSlots(options.max_large_lists, options.large_list_wait),
        access=Access(options.access_cache_ttl), candidates=candidates)
    if cache is None:
        return None, passthrough
    return cache, CacheSource(cache, passthrough, candidates, sync_wait=options.cache_sync_wait)


def make_pipeline(source, sidecar, web_ui=False):
    """The process's list pipeline: its source, selection cache and decorators (metrics in
    lists and details, with ``sidecar``; None: metrics off; upstream's shapes for the web UI
    with ``web_ui``), built once."""
    metrics = metric_lists.MetricsDecorator(sidecar, web_ui)
    return Pipeline(source, decorators=[metrics], detail_decorators=[metrics.detail])
