"""Container logs: the paged log view, the streamed download and the log sources of an object."""

import logging

import tornado.iostream

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.kinds import table as kinds
from dashboard_api.logs import sources
from dashboard_api.logs.details import LogBuffer, ReadPlan, log_details
from dashboard_api.logs.lines import parse_rfc3339
from dashboard_api.logs.selection import (BEGINNING, END, NEWEST, OLDEST, PAGE_LINES, LineId,
                                          Selection)
from dashboard_api.serving.errors import ApiError, bad_request, not_found
from dashboard_api.serving.routes import Route
from dashboard_api.summaries.related import Related

log = logging.getLogger("dashboard_api.handlers.logs")

# Downloads: the API server's reads come in pieces of about 12 KiB; they are passed on in
# batches of FLUSH_BYTES, large enough for throughput, small enough that memory stays flat.
DOWNLOAD_CHUNK = 256 << 10
FLUSH_BYTES = 256 << 10
VIEW_CHUNK = 64 << 10


async def get_pod(fetch, namespace, name):
    """(where pods are served, the pod), read through the request's Fetch."""
    pods = await fetch.resource(kinds.get("pod"))
    return pods, await fetch.get(pods, namespace, name)


def pick_container(pod, container):
    """The named container (404 when the pod has none of that name) or the first one."""
    spec = pod.get("spec") or {}
    if not container:
        containers = spec.get("containers") or []
        if not containers:
            raise bad_request("pod %s has no containers" % pod["metadata"]["name"])
        return containers[0]["name"]
    for key in ("containers", "initContainers", "ephemeralContainers"):
        if any(c.get("name") == container for c in spec.get(key) or []):
            return container
    raise not_found('container "%s" not found in pod "%s"' % (container, pod["metadata"]["name"]))


def require_previous(pod, container):
    """400 unless the container has run before its current instance."""
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for st in status.get(key) or []:
            if st.get("name") == container and (
                    st.get("restartCount") or (st.get("lastState") or {}).get("terminated")):
                return
    raise bad_request('container "%s" in pod "%s" has no previous instance: it has not restarted'
                      % (container, pod["metadata"]["name"]))


def log_params(container, previous, extra):
    params = {"container": container}
    if previous:
        params["previous"] = "true"
    params.update(extra)
    return params


def log_page(plan, data, lost_oldest, since, pod, container, selection, timestamps,
             line_objects=False):
    """The LogDetails answer from the bytes read (pure)."""
    lines, cut = plan.trim(data, lost_oldest, since)
    return log_details(pod, container, lines, cut, plan, selection, timestamps, line_objects)


async def open_log(handle, pods, namespace, pod, container, previous, extra, timeout):
    """The container's log as a stream; a missing previous instance is a 400."""
    try:
        return await handle.stream(pods.path(namespace, pod, "log"),
                                   log_params(container, previous, extra), timeout=timeout)
    except ApiError as exc:
        raise previous_error(exc, previous)


def previous_error(exc, previous):
    """The API server's answer when the previous instance's log is gone, as a clear 400."""
    if previous and exc.code in (400, 404):
        return bad_request("no log of a previous instance: %s" % exc.message)
    return exc


class LogsBase(BaseHandler):
    def fetch(self):
        """The request's reads (401 without a token), as the resource routes make them."""
        return self.reads()


class LogHandler(LogsBase):
    """GET /api/v1/log/{namespace}/{pod}[/{container}]: a page of the log (LogDetails)."""

    async def get(self, namespace, pod, container=None):
        selection, tail_lines = self.selection()
        previous = self.bool_arg("previous")
        timestamps = self.bool_arg("timestamps")
        since = self.get_query_argument("sinceTime", "") or None
        if since is not None and parse_rfc3339(since) is None:
            raise bad_request("sinceTime must be an RFC 3339 time, got %r" % since)
        fetch = self.fetch()
        pods, pod_obj = await get_pod(fetch, namespace, pod)
        container = pick_container(pod_obj, container)
        plan = ReadPlan.for_position(selection.position, tail_lines)
        extra = plan.params()
        if since is not None:
            extra["sinceTime"] = since
        buffer = LogBuffer(plan)
        compat = self.ctx.options.web_ui_compat
        await self.read_log(fetch, pods, pod_obj, container, previous, extra, buffer, compat)
        # Splitting, parsing and selecting 5,000 lines takes tens of ms: not on the event loop.
        self.write_json(await self.cluster.api.executor.run(
            log_page, plan, bytes(buffer.data), buffer.lost_oldest, since, pod, container,
            selection, timestamps, compat))

    async def read_log(self, fetch, pods, pod_obj, container, previous, extra, buffer, compat):
        """Fills ``buffer`` with the log. With ``compat`` (--web-ui-compat), why there is no log
        (a container not started yet, no right to pods/log, no previous instance) becomes the
        log text with a 200, as upstream answers; the upstream web UI shows its error page on
        an error status. A 401 stays one, so the UI signs out."""
        namespace, pod = pod_obj["metadata"]["namespace"], pod_obj["metadata"]["name"]
        try:
            if previous:
                require_previous(pod_obj, container)
            stream = await open_log(fetch.handle, pods, namespace, pod, container, previous,
                                    extra, self.cluster.api.timeout)
        except ApiError as exc:
            if not compat or exc.code == 401:
                raise
            buffer.add(exc.message.encode("utf-8"))
            return
        try:
            # Bounded: the buffer keeps at most its budget, and a read from the beginning stops
            # once the budget is full (the API server's limitBytes already caps it).
            while not buffer.full:
                chunk = await stream.read(VIEW_CHUNK)
                if not chunk:
                    break
                buffer.add(chunk)
        finally:
            stream.close()

    def selection(self):
        """(Selection, tailLines) from the query; 400 on malformed values.

        Without offsets the newest lines are shown (``tailLines`` of them, default 100), or the
        oldest ones with ``logFilePosition=beginning``. With offsets, the upstream paging
        parameters apply.
        """
        tail_lines = self.int_arg("tailLines", None, minimum=0)
        position = self.get_query_argument("logFilePosition", "")
        if position not in ("", BEGINNING, END):
            raise bad_request("logFilePosition must be %s or %s, got %r"
                              % (BEGINNING, END, position))
        if tail_lines is not None and position == BEGINNING:
            raise bad_request("tailLines counts from the end: it does not go with "
                              "logFilePosition=beginning")
        offset_from = self.int_arg("offsetFrom", None)
        offset_to = self.int_arg("offsetTo", None)
        line_num = self.int_arg("referenceLineNum", 0)  # checked even where unused
        if (offset_from is None) != (offset_to is None):
            raise bad_request("offsetFrom and offsetTo go together")
        count = PAGE_LINES if tail_lines is None else tail_lines
        if offset_from is None:
            if position == BEGINNING:
                return Selection(LineId(OLDEST), 0, count, BEGINNING), None
            return Selection.last_lines(count), tail_lines
        reference = LineId(self.get_query_argument("referenceTimestamp", "") or NEWEST,
                           line_num)
        return Selection(reference, offset_from, offset_to, position), tail_lines


class LogFileHandler(LogsBase):
    """GET /api/v1/log/file/{namespace}/{pod}/{container}: the whole log as a text download,
    passed on chunk by chunk as the API server sends it, so memory stays flat."""

    async def get(self, namespace, pod, container):
        previous = self.bool_arg("previous")
        timestamps = self.bool_arg("timestamps")
        fetch = self.fetch()
        pods, pod_obj = await get_pod(fetch, namespace, pod)
        container = pick_container(pod_obj, container)
        if previous:
            require_previous(pod_obj, container)
        extra = {"timestamps": "true"} if timestamps else {}
        stream = await open_log(fetch.handle, pods, namespace, pod, container, previous, extra,
                                self.cluster.api.timeout)
        try:
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.set_header("Content-Disposition", 'attachment; filename="logs-from-%s-in-%s%s.log"'
                            % (container, pod, "-previous" if previous else ""))
            await self.relay(stream)
        finally:
            stream.close()

    async def relay(self, stream):
        pending = 0
        while True:
            try:
                chunk = await stream.read(DOWNLOAD_CHUNK, fill=True)
            except Exception as exc:  # urllib3 and socket errors alike end the download
                if not self._headers_written:
                    if isinstance(exc, ApiError):   # a 504 of the idle limit, a 503
                        raise
                    raise ApiError(502, "reading the log from the API server failed: %s"
                                   % type(exc).__name__)
                # A clean end of the chunked reply would pass a cut-off log for a whole one.
                log.warning("log download of %s aborted: %s", self.request.path,
                            type(exc).__name__)
                self.request.connection.close()
                return
            if not chunk:
                return
            self.write(chunk)
            pending += len(chunk)
            if pending < FLUSH_BYTES:
                continue
            pending = 0
            try:
                await self.flush()  # waits for the client: the back-pressure that bounds memory
            except tornado.iostream.StreamClosedError:
                return  # the client went away


class LogSourcesHandler(LogsBase):
    """GET /api/v1/log/source/{namespace}/{resourceName}/{resourceType}: pods and containers."""

    async def get(self, namespace, resourceName, resourceType):
        kind = resourceType.lower()
        if kind not in sources.RESOURCE_TYPES:
            raise bad_request("unknown resource type %r for log sources; one of: %s"
                              % (resourceType, ", ".join(sources.RESOURCE_TYPES)))
        fetch = self.fetch()
        obj = await fetch.get(kinds.get(kind), namespace, resourceName)
        if kind == "pod":
            self.write_json(sources.log_sources([obj]))
            return
        rel = await fetch.gather(sources.pod_needs(kind, obj), Related())
        self.write_json(sources.log_sources(sources.pods_of(kind, obj, rel),
                                            sources.template_spec(kind, obj)))


ROUTES = [
    Route("/api/v1/log/{namespace}/{pod}", LogHandler, "log",
          summary="A page of the first container's log"),
    Route("/api/v1/log/{namespace}/{pod}/{container}", LogHandler, "log-container",
          summary="A page of a container's log (LogDetails)"),
    Route("/api/v1/log/file/{namespace}/{pod}/{container}", LogFileHandler, "log-file",
          summary="The whole log of a container as a text/plain download"),
    Route("/api/v1/log/source/{namespace}/{resourceName}/{resourceType}", LogSourcesHandler,
          "log-source", summary="The pods and containers whose logs an object has"),
]
