"""Workload operations: deployment pause, resume, restart and rollback; stateful set and daemon
set restart; cron job trigger; replication controller replica count.

Each reads the object with the caller's token, changes it and writes it back (again from a
fresh read on a 409 conflict, writes/updates.py); the controllers do the rest. Shapes follow
the reference (§8.5-8.8, 8.12). A refusal that depends on the object's state (already paused,
no such revision) is a 409 or 404 with a plain message, and nothing is written.
"""

import datetime
import secrets

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.kinds import table as kinds
from dashboard_api.serving.errors import ApiError, bad_request, not_found
from dashboard_api.serving.routes import COMMAND_BODY, Route
from dashboard_api.summaries.labelselector import to_query
from dashboard_api.writes.updates import update

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
REVISION = "deployment.kubernetes.io/revision"
RANDOM_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def restarted_now(obj):
    """Stamps the pod template as ``kubectl rollout restart`` does: the controller sees a new
    template and replaces every pod."""
    meta = obj["spec"].setdefault("template", {}).setdefault("metadata", {})
    annotations = meta.get("annotations") or {}
    annotations[RESTARTED_AT] = datetime.datetime.now().astimezone().isoformat(
        timespec="seconds")
    meta["annotations"] = annotations


def revision_of(obj):
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION, "")


def random_suffix(n):
    return "".join(secrets.choice(RANDOM_ALPHABET) for _ in range(n))


class WorkloadHandler(BaseHandler):
    kind = None  # a row name of the kinds table

    async def resource(self, handle, name=None):
        row = kinds.get(name or self.kind)
        return await self.cluster.api.discovery.resolve(handle, row.group, row.plural,
                                                        row.versions)

    async def change(self, namespace, name, change):
        handle = self.caller()
        return await update(handle, await self.resource(handle), namespace, name, change)


def _set_paused(paused):
    def change(obj):
        if bool(obj["spec"].get("paused")) == paused:
            raise ApiError(409, "the Deployment is already paused" if paused
                           else "the deployment is already resumed", "Conflict")
        obj["spec"]["paused"] = paused
    return change


class PauseHandler(WorkloadHandler):
    kind = "deployment"

    async def put(self, namespace, name):
        self.write_json(await self.change(namespace, name, _set_paused(True)))


class ResumeHandler(WorkloadHandler):
    kind = "deployment"

    async def put(self, namespace, name):
        self.write_json(await self.change(namespace, name, _set_paused(False)))


class DeploymentRestartHandler(WorkloadHandler):
    kind = "deployment"

    async def put(self, namespace, name):
        updated = await self.change(namespace, name, restarted_now)
        self.write_json({"revision": revision_of(updated)})


class RestartHandler(WorkloadHandler):
    """Stateful set and daemon set restart: the updated object."""

    def initialize(self, kind=None, **kw):
        super().initialize(**kw)
        self.kind = kind

    async def put(self, namespace, name):
        self.write_json(await self.change(namespace, name, restarted_now))


class RollbackHandler(WorkloadHandler):
    """Copies the pod template spec of the replica set of ``revision`` into the deployment
    (as upstream; the template's metadata stays)."""

    kind = "deployment"

    async def put(self, namespace, name):
        handle = self.caller()
        body = self.json_body()
        wanted = body.get("revision") if isinstance(body, dict) else None
        if isinstance(wanted, int) and not isinstance(wanted, bool):
            wanted = str(wanted)
        if not isinstance(wanted, str) or not wanted.isdigit() or int(wanted) < 1:
            raise bad_request('the body must be {"revision": "<n>"} with n a positive integer')
        deployments = await self.resource(handle)
        deployment = await handle.get(deployments.path(namespace, name))
        if revision_of(deployment) in ("", "1"):
            raise not_found("no revision for rolling back")
        replica_sets = await self.resource(handle, "replicaset")
        listed = await handle.get(replica_sets.path(namespace), {
            "labelSelector": to_query(deployment["spec"].get("selector") or {})})
        uid = deployment["metadata"]["uid"]
        template = None
        for rs in listed.get("items", []):
            owned = any(o.get("uid") == uid and o.get("controller")
                        for o in rs["metadata"].get("ownerReferences") or [])
            if owned and revision_of(rs) == wanted:
                template = rs["spec"]["template"].get("spec")
        if template is None:
            raise not_found("there is no ReplicaSet that has the requested revision for the "
                            "Deployment")

        def change(obj):
            if obj["metadata"]["uid"] != uid:
                raise ApiError(409, "the deployment was replaced during the rollback",
                               "Conflict")
            obj["spec"]["template"]["spec"] = template
        updated = await update(handle, deployments, namespace, name, change)
        self.write_json({"revision": revision_of(updated)})


class TriggerHandler(WorkloadHandler):
    """Creates a Job from the cron job's template, named and owned as upstream names it."""

    kind = "cronjob"

    async def put(self, namespace, name):
        handle = self.caller()
        cronjob = await handle.get((await self.resource(handle)).path(namespace, name))
        jobs = await self.resource(handle, "job")
        template = cronjob["spec"].get("jobTemplate") or {}
        meta = cronjob["metadata"]
        prefix = meta["name"][:41] if len(meta["name"]) >= 42 else meta["name"]
        for attempt in range(3):
            job = {
                "apiVersion": jobs.api_version, "kind": "Job",
                "metadata": {
                    "name": "%s-manual-%s" % (prefix, random_suffix(3)),
                    "namespace": meta["namespace"],
                    "labels": (template.get("metadata") or {}).get("labels") or {},
                    "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
                    "ownerReferences": [{
                        "apiVersion": cronjob["apiVersion"], "kind": "CronJob",
                        "name": meta["name"], "uid": meta["uid"], "controller": True,
                        "blockOwnerDeletion": True}]},
                "spec": template.get("spec") or {}}
            try:
                await handle.request("POST", jobs.path(meta["namespace"]), body=job)
                break
            except ApiError as exc:
                if exc.code != 409 or exc.reason != "AlreadyExists" or attempt == 2:
                    raise
        self.set_status(200)
        self.finish()


class ReplicasHandler(WorkloadHandler):
    """POST .../update/pod {replicas}: the replication controller's desired count; 202."""

    kind = "replicationcontroller"

    async def post(self, namespace, name):
        self.caller()  # 401 before any complaint about the body
        body = self.json_body()
        replicas = body.get("replicas") if isinstance(body, dict) else None
        if not isinstance(replicas, int) or isinstance(replicas, bool) or \
                not 0 <= replicas < 2 ** 31:
            raise bad_request('the body must be {"replicas": n} with n a non-negative integer')

        def change(obj):
            obj["spec"]["replicas"] = replicas
        await self.change(namespace, name, change)
        self.set_status(202)
        self.finish()


_DEP = "/api/v1/deployment/{namespace}/{name}/"
ROUTES = [
    Route(_DEP + "pause", PauseHandler, "deployment-pause",
          max_body=COMMAND_BODY,
          summary="Pauses the rollout of a deployment; the updated deployment"),
    Route(_DEP + "resume", ResumeHandler, "deployment-resume",
          max_body=COMMAND_BODY,
          summary="Resumes the rollout of a deployment; the updated deployment"),
    Route(_DEP + "restart", DeploymentRestartHandler, "deployment-restart",
          max_body=COMMAND_BODY,
          summary="Restarts every pod of a deployment (restartedAt annotation); {revision}"),
    Route(_DEP + "rollback", RollbackHandler, "deployment-rollback",
          max_body=COMMAND_BODY,
          summary='Rolls a deployment back to body {"revision": "<n>"}; {revision}'),
    Route("/api/v1/statefulset/{namespace}/{name}/restart", RestartHandler,
          "statefulset-restart", kwargs={"kind": "statefulset"},
          max_body=COMMAND_BODY,
          summary="Restarts every pod of a stateful set; the updated stateful set"),
    Route("/api/v1/daemonset/{namespace}/{name}/restart", RestartHandler,
          "daemonset-restart", kwargs={"kind": "daemonset"},
          max_body=COMMAND_BODY,
          summary="Restarts every pod of a daemon set; the updated daemon set"),
    Route("/api/v1/cronjob/{namespace}/{name}/trigger", TriggerHandler, "cronjob-trigger",
          max_body=COMMAND_BODY,
          summary="Runs a cron job now: creates a Job from its template (200, empty)"),
    Route("/api/v1/replicationcontroller/{namespace}/{name}/update/pod", ReplicasHandler,
          "replicationcontroller-replicas",
          max_body=COMMAND_BODY,
          summary='Sets a replication controller\'s replica count from {"replicas": n} (202)'),
]
