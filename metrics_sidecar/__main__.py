"""Start-up of the metrics sidecar: flags, store, scraper, HTTP server; SIGTERM stops it.

It needs nothing of the gateway: a process of its own with its own identity (``--kubeconfig``
or the in-cluster service account), reached by the gateway at ``--sidecar-host``.
"""

import asyncio
import logging
import signal
import sys

import tornado.httpserver

from metrics_sidecar import options as sidecar_options
from metrics_sidecar.routes import make_app, read_token
from metrics_sidecar.api import Api, load_config
from metrics_sidecar.scraper import Scraper
from metrics_sidecar.store import Store

log = logging.getLogger("metrics_sidecar")


async def serve(opts):
    token = None
    if opts.sidecar_token_file:
        try:
            token = read_token(opts.sidecar_token_file)
        except (OSError, ValueError) as exc:
            log.error("cannot read --sidecar-token-file: %s", exc)
            return 2
    try:
        cfg = load_config(opts.kubeconfig)
    except Exception as exc:  # the loaders raise several unrelated types
        log.error("cannot load the cluster configuration from %s: %s",
                  opts.kubeconfig or "the in-cluster service account", exc)
        return 2
    store = Store(opts.db_file, opts.metric_duration)
    api = Api(cfg, timeout=opts.scrape_timeout, connect_timeout=opts.apiserver_connect_timeout,
              watch_idle=opts.watch_idle_timeout)
    scraper = Scraper(api, store, opts.namespaces, opts.metric_resolution)
    server = tornado.httpserver.HTTPServer(make_app(store, scraper, token))
    try:
        server.listen(opts.port, opts.bind_address)
    except OSError as exc:
        log.error("cannot listen on %s:%d: %s", opts.bind_address, opts.port, exc)
        store.close()
        return 2
    log.info("serving on %s:%d; scraping every %gs, keeping %gs, namespaces %s, database %s",
             opts.bind_address, opts.port, opts.metric_resolution, opts.metric_duration,
             ",".join(opts.namespaces) or "(all)", opts.db_file or "(in memory)")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    scraper.start()
    await stop.wait()
    log.info("stopping")
    scraper.stop()
    server.stop()
    api.close()
    store.close()
    return 0


def main(argv=None):
    opts = sidecar_options.parse(argv)
    logging.basicConfig(level=logging.INFO if opts.verbosity > 0 else logging.WARNING,
                        stream=sys.stderr,
                        format="%(asctime)s metrics-sidecar %(levelname)s %(name)s: %(message)s")
    logging.getLogger("metrics_sidecar").setLevel(logging.INFO)
    if opts.verbosity <= 0:
        logging.getLogger("metrics_sidecar.scraper").setLevel(logging.WARNING)
    return asyncio.run(serve(opts))


if __name__ == "__main__":
    sys.exit(main())
