"""The sidecar's calls to the API server, with its own identity, through blocking urllib3.

The HTTP calls block (a urllib3 pool of the gateway's kubeapi/connection.py: client
certificates, CA, proxy, the bearer token re-read as it rotates) and so run in a small thread
pool, as does the decoding of their bodies; the event loop only awaits them. A WATCH is read
in a thread of its own (metrics_sidecar/podwatch.py) with ``open_stream``.

Every failure is a ``ScrapeError``; ``status`` is the HTTP status when the server answered one
(403 and 410 mean different things to a watch), else None.
"""

import asyncio
import concurrent.futures
import socket
import urllib.parse

import ujson
import urllib3

from dashboard_api.kubeapi import connection, kubeconfig
from dashboard_api.kubeapi.deadlines import Deadline, DeadlinePassed, read_body

USER_AGENT = "metrics-sidecar"


class ScrapeError(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def load_config(kubeconfig_path=None):
    """The kubeapi.connection.Connection of the sidecar's own identity; raises when unusable."""
    if kubeconfig_path:
        cfg = kubeconfig.connection(kubeconfig_path)
    else:
        cfg = connection.in_cluster()
    if not cfg.host:
        raise ValueError("no API server address")
    return cfg


class Api:
    """Blocking GETs, run in a pool of ``workers`` threads. ``pod_lists`` counts the full LISTs
    of pods begun (metrics_sidecar/podfacts.py), which /healthz reports: once the pods are
    watched, scrapes make none."""

    def __init__(self, cfg, timeout=30.0, workers=2, connect_timeout=5.0, watch_idle=90.0):
        self.cfg = cfg
        self.host = cfg.host.rstrip("/")
        self.http = connection.pool(cfg, workers)   # TCP keepalive on every socket
        self.timeout = timeout              # the deadline of one GET, body included
        self.connect_timeout = connect_timeout
        self.watch_idle = watch_idle        # a watch silent this long is taken for dead
        self.pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="scrape")
        self.pod_lists = 0

    def _headers(self):
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        token = self.cfg.authorization()
        if token:
            headers["Authorization"] = token
        return headers

    def _url(self, path, params):
        return self.host + path + ("?" + urllib.parse.urlencode(params) if params else "")

    def _fetch(self, path, params, decode):
        """One GET by its deadline (issue 27: connect, headers and a trickling body alike)."""
        deadline = Deadline(self.timeout, self.connect_timeout)
        try:
            response = self.http.request("GET", self._url(path, params), headers=self._headers(),
                                         retries=False, preload_content=False,
                                         timeout=self._timeout(deadline.seconds))
            status = response.status
            data = read_body(response, deadline)
        except DeadlinePassed:
            raise ScrapeError("GET %s: the API server did not answer within %gs"
                              % (path, self.timeout)) from None
        except Exception as exc:  # urllib3 and socket errors of several types
            raise ScrapeError("GET %s failed: %s" % (path, exc)) from None
        response = None
        if not 200 <= status < 300:
            raise ScrapeError("GET %s answered %s: %s" % (path, status, _message(data)), status)
        return decode(path, data)

    def _timeout(self, read):
        return urllib3.Timeout(connect=min(self.connect_timeout, read), read=read)

    def _get(self, path, params, keep=None):
        def decode(path, data):
            try:
                body = ujson.loads(data)
            except ValueError:
                raise ScrapeError("GET %s answered a body that is not JSON" % path) from None
            if not isinstance(body, dict) or not isinstance(body.get("items"), list):
                raise ScrapeError("GET %s answered no list of items" % path)
            if keep is not None:
                body["items"] = [keep(item) for item in body["items"]]
            return body
        return self._fetch(path, params, decode)

    async def fetch(self, path, params, decode):
        """``decode(path, body bytes)`` of one GET, both in the pool."""
        return await asyncio.wrap_future(self.pool.submit(self._fetch, path, dict(params or {}),
                                                          decode))

    async def get(self, path, params=None, keep=None):
        return await asyncio.wrap_future(self.pool.submit(self._get, path, dict(params or {}),
                                                          keep))

    async def list(self, path, params=None, keep=None, chunk=500, max_chunks=1000):
        """Every item of a list, in chunks of ``chunk``; ``keep(item)`` (in the decoding
        thread) is what is kept of each."""
        items, params = [], dict(params or {}, limit=chunk)
        for _ in range(max_chunks):
            body = await self.get(path, params, keep)
            items.extend(body["items"])
            token = (body.get("metadata") or {}).get("continue")
            if not token:
                return items
            params["continue"] = token
        raise ScrapeError("listing %s did not end" % path)

    def open_stream(self, path, params, read_timeout):
        """A blocking GET whose body is read as it arrives (a WATCH), for the caller's own
        thread: the urllib3 response (``stream()`` it, then ``close_stream`` it).
        ``read_timeout`` bounds each wait for the next bytes: a watch's idle limit."""
        try:
            response = self.http.request("GET", self._url(path, params), headers=self._headers(),
                                         retries=False, preload_content=False,
                                         timeout=self._timeout(read_timeout))
        except Exception as exc:  # urllib3 and socket errors of several types
            raise ScrapeError("GET %s failed: %s" % (path, exc)) from None
        if not 200 <= response.status < 300:
            try:
                data = response.read(65536)
            except Exception:  # noqa: BLE001 (the status says enough)
                data = b""
            close_stream(response)
            raise ScrapeError("GET %s answered %s: %s" % (path, response.status,
                                                          _message(data)), response.status)
        return response

    def close(self):
        self.pool.shutdown(wait=False)
        self.http.clear()


def close_stream(response):
    """Closes a streamed response's connection and hands its slot back to the pool (in the
    thread that reads it)."""
    try:
        response.close()
        response.release_conn()
    except Exception:  # noqa: BLE001 (a connection that is already gone)
        pass


def abort_stream(response):
    """Unblocks a read of ``response`` in another thread: it then fails at once."""
    try:
        if hasattr(response, "shutdown"):  # urllib3 >= 2.3, made for this
            response.shutdown()
        else:
            response.connection.sock.shutdown(socket.SHUT_RDWR)
    except Exception:  # noqa: BLE001 (a connection that is already gone)
        pass


def _message(body):
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    try:
        return ujson.loads(body).get("message") or body[:200]
    except (ValueError, AttributeError, TypeError):
        return (body or "")[:200]
