"""PUT /api/v1/node/{name}/drain: cordon the node, then evict its pods through the Eviction
API, as ``kubectl drain`` does (rules and defaults in drainplan.py).

Evictions refused by a disruption budget (429) are retried every second until ``timeout``;
evicted pods are then awaited until they are gone, within the same timeout. On success the
answer is 202 with the pods evicted and skipped; otherwise an error naming every pod that
could not be evicted and why (the node stays cordoned, as kubectl leaves it). The Eviction
version is the policy group's that the server serves (policy/v1beta1 on 1.20); a server
without the eviction subresource gets plain deletes.
"""

import asyncio
import time

from dashboard_api.cache.applied import deleted
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.kubeapi.discovery import segment
from dashboard_api.serving.errors import ApiError, from_apiserver
from dashboard_api.serving.routes import Route
from dashboard_api.writes import drainplan

RETRY_SECONDS = 1.0


class DrainHandler(BaseHandler):
    async def put(self, name):
        handle = self.caller()
        opts = drainplan.options(self.json_body())
        deadline = time.monotonic() + opts["timeout"] / drainplan.NANOS
        node_path = "/api/v1/nodes/" + segment(name)
        node = await self._step("error getting node", handle.get(node_path))
        if not node["spec"].get("unschedulable"):
            await self._step("error cordoning node", handle.request(
                "PATCH", node_path, body={"spec": {"unschedulable": True}},
                content_type="application/merge-patch+json"))
        pods = await handle.get("/api/v1/pods", {"fieldSelector": "spec.nodeName=" + name})
        evict, skipped, refused = drainplan.plan(pods.get("items", []), opts)
        if refused:
            raise ApiError(409, "error draining node %s: cannot evict %s" % (name, "; ".join(
                "%s (%s)" % (drainplan.key(p), why) for p, why in refused)), "Conflict",
                {"pods": drainplan.report(refused)})
        send = await self._eviction_sender(handle, opts)
        failed = await self._evict_all(send, evict, deadline)
        if not failed:
            failed = await self._wait_gone(handle, evict, deadline)
        if not failed:
            await deleted(self, "", "pods", evict)  # the next pod list shows them gone
        if failed:
            codes = {code for _, _, code in failed}
            code = 504 if codes <= {429, 504} else max(codes)
            raise ApiError(code, "error draining node %s: %s" % (name, "; ".join(
                "%s: %s" % (drainplan.key(p), why) for p, why, _ in failed)),
                "Timeout" if code == 504 else None,
                {"pods": drainplan.report([(p, why) for p, why, _ in failed])})
        self.write_json({"evicted": [drainplan.key(p) for p in evict],
                         "skipped": drainplan.report(skipped)}, 202)

    @staticmethod
    async def _step(prefix, call):
        try:
            return await call
        except ApiError as exc:
            raise ApiError(exc.code, "%s: %s" % (prefix, exc.message), exc.reason, exc.details)

    async def _eviction_sender(self, handle, opts):
        """An async ``send(pod) -> (status, message)`` that evicts (or deletes) one pod."""
        discovery = self.cluster.api.discovery
        pods = await discovery.resolve(handle, "", "pods")
        versions = await discovery.versions(handle, "policy")
        version = next((v for v in ("v1", "v1beta1") if v in versions), None)
        grace = opts["gracePeriodSeconds"]
        delete_options = {"gracePeriodSeconds": grace} if grace >= 0 else {}

        async def send(pod):
            meta = pod["metadata"]
            path = pods.path(meta["namespace"], meta["name"])
            if version and "eviction" in pods.subresources:
                response = await handle.call("POST", path + "/eviction", body={
                    "apiVersion": "policy/" + version, "kind": "Eviction",
                    "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                    "deleteOptions": delete_options})
            else:
                response = await handle.call("DELETE", path, body=dict(
                    delete_options, kind="DeleteOptions", apiVersion="v1"))
            if response.status < 300 or response.status == 404:
                return response.status, ""
            return response.status, from_apiserver(response.status, response.data).message
        return send

    @staticmethod
    async def _evict_all(send, pods, deadline):
        """Evicts each pod, retrying those a disruption budget protects (429) until the
        deadline; [(pod, reason, status)] of those not evicted."""
        pending, failed = list(pods), []
        while pending:
            blocked = []
            for pod in pending:
                status, message = await send(pod)
                if status == 429:
                    blocked.append((pod, message, 429))
                elif status >= 300 and status != 404:
                    failed.append((pod, message, status))
            pending = [p for p, _, _ in blocked]
            if not pending:
                break
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                failed.extend(blocked)
                break
            await asyncio.sleep(min(RETRY_SECONDS, remaining))
        return failed

    @staticmethod
    async def _wait_gone(handle, pods, deadline):
        """Waits until every evicted pod is gone (or replaced under its name)."""
        waiting = list(pods)
        while waiting:
            still = []
            for pod in waiting:
                meta = pod["metadata"]
                response = await handle.call("GET", "/api/v1/namespaces/%s/pods/%s" % (
                    segment(meta["namespace"]), segment(meta["name"])), decode=True)
                if response.status == 200 and response.json()["metadata"]["uid"] == meta["uid"]:
                    still.append(pod)
            waiting = still
            if not waiting:
                return []
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return [(p, "evicted but still terminating at the timeout", 504)
                        for p in waiting]
            await asyncio.sleep(min(RETRY_SECONDS / 2, remaining))
        return []


ROUTES = [
    Route("/api/v1/node/{name}/drain", DrainHandler, "node-drain",
          summary="Cordons a node and evicts its pods, honouring disruption budgets; body "
                  "{force, timeout (ns), gracePeriodSeconds, ignoreAllDaemonSets, "
                  "deleteEmptyDirData}, all optional (202 {evicted, skipped})"),
]
