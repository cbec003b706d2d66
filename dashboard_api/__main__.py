"""Start-up: parse flags, check the API server, serve."""

import asyncio
import logging
import sys

import tornado.httpserver

from dashboard_api import options as options_mod
from dashboard_api import server
from dashboard_api.cluster import Cluster
from dashboard_api.cluster import config as cluster_config
from dashboard_api.cluster.executor import Executor
from dashboard_api.errors import ApiError
from dashboard_api.telemetry import Telemetry

log = logging.getLogger("dashboard_api")


async def check_apiserver(cluster):
    """The start-up version request; returns the server's version or raises with the reason."""
    handle = cluster.service_handle() if cluster.config.service_pool else None
    if handle is None:
        # Proxy mode has no identity of its own: an anonymous call proves the server answers.
        handle = cluster.handle("")
        handle._auth = None
    response = await handle.call("GET", "/version", timeout=10)
    if response.status >= 400 and not (cluster.config.service_pool is None
                                       and response.status in (401, 403)):
        raise ApiError(response.status, "the API server answered %d to GET /version"
                       % response.status)
    return (response.json() or {}).get("gitVersion", "unknown")


async def serve(opts):
    try:
        config = cluster_config.load(opts)
    except cluster_config.ConfigError as exc:
        log.critical("%s", exc)
        return 1
    cluster = Cluster(config, Executor(opts.api_workers), qps=opts.api_qps,
                      burst=opts.api_burst, timeout=opts.api_timeout)
    try:
        version = await check_apiserver(cluster)
    except ApiError as exc:
        log.critical("cannot reach the API server at %s: %s. Check --apiserver-host, "
                     "--kubeconfig or the in-cluster configuration.", config.host, exc.message)
        return 1
    log.info("API server %s answers, version %s", config.host, version)
    ctx = server.make_context(opts, cluster, Telemetry())
    app = server.make_app(ctx)
    if not opts.insecure_bind_address:
        log.critical("nothing to serve on: give --tls-cert-file/--tls-key-file, "
                     "--auto-generate-certificates or --insecure-bind-address")
        return 1
    http = tornado.httpserver.HTTPServer(app, xheaders=False)
    http.listen(opts.insecure_port, opts.insecure_bind_address)
    log.info("serving HTTP on %s:%d", opts.insecure_bind_address, opts.insecure_port)
    await asyncio.Event().wait()
    return 0


def main(argv=None):
    opts = options_mod.parse(argv)
    logging.basicConfig(level=getattr(logging, opts.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(serve(opts))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
