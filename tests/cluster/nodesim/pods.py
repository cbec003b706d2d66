"""The pod lifecycle of the simulated kubelets: watch pods bound to our nodes and run them."""

import asyncio
import contextlib
import logging
import os
import shutil

from tornado.ioloop import IOLoop

from . import logs, podstatus
from .apiclient import MERGE_PATCH, ApiError
from .model import SimPod, now_ns

log = logging.getLogger("nodesim.pods")

START_DELAY = 0.3       # ContainerCreating -> Running
CRASH_AFTER = 2.0       # lifetime of one crash-looping instance
BACKOFF = 2.0           # first CrashLoopBackOff; doubles with every restart, like a kubelet's
MAX_BACKOFF = 40.0
JOB_SECONDS = 2.0       # how long a Job's container runs unless run-seconds says otherwise
DELETE_DELAY = 0.3      # containers "stopping" before a graceful deletion is finished
MAX_RUN_SECONDS = 86400
MAX_LOG_LINES = 1_000_000
WATCH_SECONDS = 240
MAX_FAILURES = 60       # consecutive list/watch failures (about 5 minutes) before giving up
WRITE_ATTEMPTS = 5
GONE = (404, 409, 422)  # the pod was deleted or replaced under the same name
ASSIGNED = "spec.nodeName!="  # pods bound to some node; ours are picked by name


class PodEngine:
    def __init__(self, api, state_dir, node_indexes):
        self.api = api
        self.state_dir = state_dir
        self.node_indexes = node_indexes  # node name -> 1-based index, used for pod IP ranges
        self.pods = {}                    # (namespace, name) -> SimPod
        self.synced = asyncio.Event()
        self._deleting = set()            # uids whose deletion we are finishing
        self._ips = set()
        self._tasks = set()

    # -- queries for the kubelet servers

    def pod_on(self, node, namespace, name):
        sim = self.pods.get((namespace, name))
        return sim if sim is not None and sim.node == node else None

    # -- list and watch

    async def run(self):
        failures = 0
        while True:
            try:
                rv = await self._list()
                failures = 0
                while True:
                    rv = await self._watch(rv)
            except ApiError as e:
                if e.code != 410:  # 410: our resource version is too old, list again
                    failures = self._failed(failures, e)
            except Exception as e:  # network trouble or a bug: back off, list again
                failures = self._failed(failures, e)
            if failures:
                await asyncio.sleep(min(5.0, 0.2 * 2 ** failures))

    @staticmethod
    def _failed(failures, error):
        failures += 1
        if failures > MAX_FAILURES:
            raise RuntimeError("pod list/watch keeps failing: %s" % error) from error
        log.warning("pod list/watch failed (%d): %s", failures, error)
        return failures

    async def _list(self):
        body = await self.api.call("GET", "/api/v1/pods", params={"fieldSelector": ASSIGNED})
        seen = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["metadata"]["uid"]
                for p in body["items"]}
        for sim in list(self.pods.values()):
            if seen.get(sim.key) != sim.uid:
                self._forget(sim)
        for pod in body["items"]:
            self._handle("ADDED", pod)
        self.synced.set()
        return body["metadata"]["resourceVersion"]

    async def _watch(self, rv):
        latest = [rv]

        def on_event(event):
            obj = event.get("object") or {}
            latest[0] = obj["metadata"]["resourceVersion"]
            self._handle(event.get("type"), obj)

        params = {"fieldSelector": ASSIGNED, "resourceVersion": rv,
                  "allowWatchBookmarks": "true", "timeoutSeconds": str(WATCH_SECONDS)}
        await self.api.watch("/api/v1/pods", params, on_event, timeout=WATCH_SECONDS + 30)
        return latest[0]

    # -- events

    def _handle(self, kind, obj):
        try:
            if kind == "DELETED":
                self._on_deleted(obj)
            elif kind in ("ADDED", "MODIFIED"):
                self._on_pod(obj)
        except Exception:  # one odd pod must not stop the others
            log.exception("could not handle %s of pod %s", kind, obj["metadata"].get("name"))

    def _on_pod(self, obj):
        node = obj["spec"].get("nodeName")
        if node not in self.node_indexes:
            return
        meta = obj["metadata"]
        sim = self.pods.get((meta["namespace"], meta["name"]))
        if sim is not None and sim.uid != meta["uid"]:
            self._forget(sim)
            sim = None
        if meta.get("deletionTimestamp"):
            if sim is not None:
                sim.obj = obj
            self._finish_deletion(obj, sim)
            return
        if sim is not None:
            sim.obj = obj
            return
        if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return
        sim = SimPod(obj, node)
        self.pods[sim.key] = sim
        self._create(sim)

    def _on_deleted(self, obj):
        meta = obj["metadata"]
        sim = self.pods.get((meta["namespace"], meta["name"]))
        if sim is not None and sim.uid == meta["uid"]:
            self._forget(sim)
        self._deleting.discard(meta["uid"])

    def _forget(self, sim):
        sim.gone = True
        for handle in sim.timers:
            IOLoop.current().remove_timeout(handle)
        sim.timers.clear()
        self._ips.discard(sim.ip)
        self.pods.pop(sim.key, None)

    # -- lifecycle

    def _later(self, sim, delay, fn, *args):
        def fire():
            sim.timers.discard(handle)
            if not sim.gone:
                fn(sim, *args)
        handle = IOLoop.current().call_later(delay, fire)
        sim.timers.add(handle)

    def _create(self, sim):
        # a new pod under an old name (a stateful set's) starts with fresh logs, as with a kubelet
        shutil.rmtree(logs.pod_dir(self.state_dir, sim.namespace, sim.name), ignore_errors=True)
        sim.start_ns = now_ns()
        self._write_status(sim)
        self._later(sim, START_DELAY, self._start)

    def _start(self, sim):
        sim.ip = self._allocate_ip(sim)
        for c in sim.init_containers:
            c.started_at = now_ns()
            self._log(sim, c, ["init container %s starting" % c.name,
                               "init container %s done" % c.name])
            c.state, c.reason, c.exit_code, c.finished_at = "terminated", "Completed", 0, now_ns()
        for c in sim.containers:
            self._run(sim, c)
        self._write_status(sim)

    def _run(self, sim, c):
        c.state, c.reason, c.message, c.exit_code = "running", None, None, None
        c.started_at = now_ns()
        self._log(sim, c, self._startup_lines(sim, c))
        if sim.annotation("crashloop") == c.name:
            self._later(sim, CRASH_AFTER, self._exit, c, 1)
        elif sim.annotation("run-seconds") is not None or sim.is_job_pod:
            seconds = sim.number("run-seconds", JOB_SECONDS, MAX_RUN_SECONDS)
            self._later(sim, seconds, self._exit, c, 0)

    def _startup_lines(self, sim, c):
        spec = sim.spec_of(c.name) or {}
        lines = ["starting container %s (image %s, instance %d)" % (c.name, c.image, c.instance)]
        for port in spec.get("ports") or []:
            lines.append("listening on 0.0.0.0:%s/%s" % (port.get("containerPort"),
                                                         port.get("protocol", "TCP").lower()))
        lines.append("ready")
        count = int(sim.number("log-lines", 0, MAX_LOG_LINES))
        lines += ["line %d" % i for i in range(1, count + 1)]
        return lines

    def _exit(self, sim, c, code):
        self._log(sim, c, ["finished" if code == 0 else
                           "fatal: simulated crash, exiting with code %d" % code])
        c.state, c.exit_code, c.finished_at = "terminated", code, now_ns()
        c.reason = "Completed" if code == 0 else "Error"
        if code != 0 and sim.spec.get("restartPolicy", "Always") != "Never":
            c.last = podstatus.last_terminated(sim, c)
            c.state, c.reason = "waiting", "CrashLoopBackOff"
            backoff = min(BACKOFF * 2 ** c.instance, MAX_BACKOFF)
            c.message = "back-off %ds restarting failed container=%s pod=%s_%s(%s)" % (
                backoff, c.name, sim.name, sim.namespace, sim.uid)
            self._later(sim, backoff, self._restart, c)
        self._write_status(sim)

    def _restart(self, sim, c):
        c.instance += 1
        if c.instance >= 2:  # only the previous instance keeps its log, as dead containers go
            stale = logs.log_path(self.state_dir, sim.namespace, sim.name, c.name, c.instance - 2)
            with contextlib.suppress(FileNotFoundError):
                os.remove(stale)
        self._run(sim, c)
        self._write_status(sim)

    def _log(self, sim, c, lines):
        logs.append_log(self.state_dir, sim.namespace, sim.name, c.name, lines, c.instance)

    def _allocate_ip(self, sim):
        if sim.spec.get("hostNetwork"):
            return podstatus.HOST_IP
        index = self.node_indexes[sim.node]
        for i in range(253 * 11):
            ip = "10.%d.%d.%d" % (244 + i // 253, index, 2 + i % 253)
            if ip not in self._ips:
                self._ips.add(ip)
                return ip
        raise RuntimeError("no pod IP left on %s" % sim.node)

    # -- writes

    def _spawn(self, coro):
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _write_status(self, sim):
        sim.dirty = True
        if not sim.writing:
            self._spawn(self._status_writer(sim))

    async def _status_writer(self, sim):
        """Writes the newest status until nothing changed meanwhile; one writer per pod."""
        sim.writing = True
        path = "/api/v1/namespaces/%s/pods/%s/status" % (sim.namespace, sim.name)
        failures = 0
        try:
            while sim.dirty and not sim.gone:
                sim.dirty = False
                body = {"metadata": {"uid": sim.uid}, "status": podstatus.build(sim, now_ns())}
                try:
                    await self.api.call("PATCH", path, body, content_type=MERGE_PATCH)
                except ApiError as e:
                    if e.code in GONE:
                        log.info("status of %s/%s not written: %s", sim.namespace, sim.name, e)
                        return
                    failures += 1
                except OSError:
                    failures += 1
                else:
                    continue
                if failures >= WRITE_ATTEMPTS:
                    log.warning("giving up on the status of %s/%s", sim.namespace, sim.name)
                    return
                sim.dirty = True
                await asyncio.sleep(0.5 * failures)
        finally:
            sim.writing = False

    def _finish_deletion(self, obj, sim):
        meta = obj["metadata"]
        if meta["uid"] in self._deleting:
            return
        self._deleting.add(meta["uid"])
        if sim is not None:
            for handle in sim.timers:
                IOLoop.current().remove_timeout(handle)
            sim.timers.clear()
        grace = meta.get("deletionGracePeriodSeconds") or 0
        IOLoop.current().call_later(min(DELETE_DELAY, grace), lambda: self._spawn(
            self._delete(meta["namespace"], meta["name"], meta["uid"])))

    async def _delete(self, namespace, name, uid):
        path = "/api/v1/namespaces/%s/pods/%s" % (namespace, name)
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                "preconditions": {"uid": uid}}
        for attempt in range(WRITE_ATTEMPTS):
            try:
                await self.api.call("DELETE", path, body)
                return
            except ApiError as e:
                if e.code in GONE:
                    return
            except OSError:
                pass
            await asyncio.sleep(0.5 * (attempt + 1))
        log.warning("could not finish the deletion of %s/%s", namespace, name)

    def stop(self):
        for sim in list(self.pods.values()):
            self._forget(sim)
        for task in list(self._tasks):
            task.cancel()
