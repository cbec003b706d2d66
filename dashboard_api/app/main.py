"""Start-up: parse flags, check the API server, serve until SIGTERM or SIGINT."""

import asyncio
import logging
import resource
import signal
import sys

from dashboard_api.app import options as options_mod, server
from dashboard_api.audit import AuditConfigError
from dashboard_api.auth.csrf import CsrfKeyError
from dashboard_api.auth.oidc import OidcConfigError
from dashboard_api.clusters.registry import Clusters
from dashboard_api.kubeapi import config as cluster_config
from dashboard_api.kubeapi.client import Cluster, Handle
from dashboard_api.kubeapi.executor import Executor
from dashboard_api.kubeapi.handlecache import CachingCluster
from dashboard_api.serving import bounded, connections, lifecycle, looplag, requestlog, tls
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.telemetry import Telemetry
from dashboard_api.version import PRODUCT, VERSION
from dashboard_api.web.locales import LocaleConfigError

log = logging.getLogger("dashboard_api")

# How long a thread holding the interpreter's lock keeps it while another waits, once the
# gateway is ready (Python's default, kept until then: 5 ms). The event loop gives the lock up
# at every system call (each socket read and write, each log line) and, while the executor's
# threads decode a LIST or build an index, waits up to this long to get it back each time: a
# page that makes a dozen such calls took 100-370 ms in the seconds after /readyz said ready at
# 150,000 pods, 2-44 ms with 1 ms (issue #41). Before ready nobody is served but the probes, and
# the first sync's sixteen decoding workers handing the lock over five times as often took a
# fifth longer to sync the pods.
SWITCH_INTERVAL = 0.001
READY_POLL = 0.5


def responsive():
    sys.setswitchinterval(SWITCH_INTERVAL)


async def responsive_once_ready(lifecycle):
    """Hands the interpreter's lock over every SWITCH_INTERVAL once the gateway is ready: at
    the very check that first finds it ready (``on_ready``: a /readyz probe's), or at the next
    of these looks (a gateway nobody probes)."""
    lifecycle.on_ready = responsive
    while not lifecycle.ready()[0]:
        if lifecycle.stopping:
            return
        await asyncio.sleep(READY_POLL)
    responsive()


async def check_apiserver(cluster):
    """The start-up version request; returns the server's version or raises with the reason."""
    if cluster.config.service_pool is not None:
        handle = cluster.service_handle()
    else:
        # Proxy mode has no identity of its own: an anonymous call proves the server answers.
        handle = Handle(cluster, None, {})
    response = await handle.call("GET", "/version", timeout=min(10, cluster.timeout))
    if response.status >= 400 and not (cluster.config.service_pool is None
                                       and response.status in (401, 403)):
        raise ApiError(response.status, "the API server answered %d to GET /version"
                       % response.status)
    return (response.json() or {}).get("gitVersion", "unknown")


def make_cluster(opts, config):
    executor = Executor(opts.api_workers)
    common = dict(qps=opts.api_qps, burst=opts.api_burst, timeout=opts.api_timeout,
                  connect_timeout=opts.apiserver_connect_timeout,
                  exec_ping_interval=opts.exec_ping_interval)
    if opts.cache_enabled:
        return CachingCluster(config, executor, size=opts.cache_size, ttl=opts.cache_ttl,
                              **common)
    return Cluster(config, executor, **common)


def connection_limits(opts):
    """The ConnectionLimits of --max-connections and the timeouts, the maximum kept within
    three quarters of the open-file limit (the rest: API-server connections, files)."""
    maximum = opts.max_connections
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and maximum > soft * 3 // 4:
        maximum = max(1, soft * 3 // 4)
        log.warning("--max-connections %d is over three quarters of the open-file limit "
                    "(%d): using %d", opts.max_connections, soft, maximum)
    return connections.ConnectionLimits(maximum, opts.header_timeout, opts.idle_timeout)


def listen(app, opts):
    """Starts the HTTPS and/or HTTP servers; returns them, or None when nothing can be served."""
    servers = []
    limits = connection_limits(opts)
    telemetry = getattr(getattr(app, "ctx", None), "telemetry", None)
    if telemetry is not None:
        telemetry.registry.register(limits)
    bounds = dict(limits=limits, body_timeout=opts.body_timeout)
    certificate = tls.certificate_files(opts)
    if certificate:
        https = connections.BoundedHTTPServer(
            app, ssl_options=tls.server_context(*certificate), **bounds)
        https.listen(opts.port, opts.bind_address)
        servers.append(https)
        log.info("serving HTTPS on %s:%d (TLS 1.2 or later)", opts.bind_address, opts.port)
    if opts.insecure_bind_address:
        http = connections.BoundedHTTPServer(app, **bounds)
        http.listen(opts.insecure_port, opts.insecure_bind_address)
        servers.append(http)
        log.info("serving HTTP on %s:%d", opts.insecure_bind_address, opts.insecure_port)
    return servers or None


async def serve(opts):
    try:
        secret = server.load_secret(opts)
        clusters = Clusters(opts, lambda config: make_cluster(opts, config), secret)
        clusters.load()
    except (cluster_config.ConfigError, CsrfKeyError) as exc:
        log.critical("%s", exc)
        return 1
    default = clusters.default
    try:
        version = await check_apiserver(default.api)
    except ApiError as exc:
        log.critical("cannot reach the API server at %s: %s. Check --apiserver-host, "
                     "--kubeconfig or the in-cluster configuration.", default.api.config.host,
                     exc.message)
        return 1
    default.probe.answered({"gitVersion": version})
    log.info("%s %s: API server %s answers, version %s", PRODUCT, VERSION,
             default.api.config.host, version)
    if len(clusters) > 1:
        log.info("serving %d clusters: %s (default %s), each under /clusters/{name}/",
                 len(clusters), ", ".join(c.name for c in clusters), default.name)
    # Before the first request can be served: a SIGTERM right after /readyz said 200 (the cache
    # may sync before its start() returns) must drain, not kill the process.
    first_signal, later_signal = catch_signals()
    try:
        ctx = server.make_context(opts, clusters, Telemetry(runtime=True))
        looplag.LoopLag(ctx.telemetry.registry).start()
        bounded.warn_without_libyaml()
        servers = listen(server.make_app(ctx), opts)
    except (LocaleConfigError, OidcConfigError, AuditConfigError, tls.TlsError, OSError) as exc:
        log.critical("%s", exc)
        return 1
    if ctx.audit is not None:
        ctx.audit.start()
        log.info("audit trail: %s, entries kept %gd or %d at most", ctx.audit.store.describe(),
                 opts.audit_retention[0] / 86400, opts.audit_retention[1])
    else:
        log.info("audit trail: the log only (--audit-db none)")
    if servers is None:
        log.critical("nothing to serve on: give --tls-cert-file/--tls-key-file, "
                     "--auto-generate-certificates or --insecure-bind-address")
        return 1
    # The default cluster starts now (readiness waits for its cache); the others on first use.
    # A signal meanwhile stops the gateway without waiting for the start (with a slow or
    # rate-limited API server, discovery alone can take many seconds).
    starting, handover = asyncio.ensure_future(default.start()), None
    await asyncio.wait([starting, first_signal], return_when=asyncio.FIRST_COMPLETED)
    if starting.done():
        starting.result()
        ctx.lifecycle.cache_started = True
        clusters.start_upkeep()
        handover = asyncio.ensure_future(responsive_once_ready(ctx.lifecycle))
    else:
        starting.cancel()
    received = await first_signal
    if handover is not None:
        handover.cancel()
    log.info("stopping (%s)", signal.Signals(received).name)
    drain = opts.drain_period if received == signal.SIGTERM else 0.0
    await lifecycle.shut_down(ctx.lifecycle, servers, [c.terminals for c in clusters], drain,
                              opts.grace_period, later_signal)
    lifecycle.quiet_cancelled_fetches()
    clusters.stop()
    if ctx.audit is not None:
        await ctx.audit.stop()
    return 0


def catch_signals():
    """From now on SIGTERM and SIGINT only start the shutdown. Returns (a future of the first
    signal, an event set by any later one)."""
    loop = asyncio.get_running_loop()
    first = loop.create_future()
    again = asyncio.Event()

    def received(sig):
        if first.done():
            log.info("second signal: stopping at once")
            again.set()
        else:
            first.set_result(sig)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, received, sig)
    return first, again


def audit_lines():
    """The audit entries' logger writes each entry as a line of JSON alone (audit/trail.py),
    which log shippers take as it is: no time or level before it (the entry has its time)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    entries = logging.getLogger("dashboard_api.audit")
    entries.addHandler(handler)
    entries.setLevel(logging.INFO)
    entries.propagate = False


def quick_records():
    """Log records without what the format never shows: the calling frame, thread and process
    (the logging HOWTO's "Optimization"). Every request makes two records (serving/requestlog.py),
    and looking those up was a sixth of their cost."""
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False


def main(argv=None):
    opts = options_mod.parse(argv)
    logging.basicConfig(level=getattr(logging, opts.log_level.upper()),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quick_records()
    audit_lines()
    requestlog.install_log_filters()
    return asyncio.run(serve(opts))

