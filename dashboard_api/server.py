"""Builds the Tornado application of the gateway from the options and the route table."""

import tornado.web

from dashboard_api import routes
from dashboard_api.context import Context
from dashboard_api.handlers.base import NotFoundHandler


def make_app(ctx):
    app = tornado.web.Application(
        routes.url_specs(routes.all_routes()),
        default_handler_class=NotFoundHandler,
        compress_response=True,
    )
    app.ctx = ctx
    return app


def make_context(options, cluster, telemetry):
    return Context(options, cluster, telemetry)
