"""GET/PUT /api/v1/scale/{kind}[/{namespace}]/{name}: replica counts through the ``scale``
subresource, for any kind that has one (deployments, replica sets, stateful sets, replication
controllers in the core group, custom objects with a scale subresource).

PUT takes ``scaleBy`` (the desired count; the UI's body ``{"scaleBy": n}`` is ignored, as
upstream) and answers the counts of the updated Scale. It is a merge patch of
``spec.replicas``, so it cannot conflict with a concurrent change of other fields.
"""

from dashboard_api.audit import targets as audit_targets
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving import params
from dashboard_api.serving.errors import bad_request
from dashboard_api.serving.routes import COMMAND_BODY, Route
from dashboard_api.writes import targets

MAX_REPLICAS = 2 ** 31 - 1  # int32


def counts(scale):
    return {"desiredReplicas": (scale.get("spec") or {}).get("replicas", 0),
            "actualReplicas": (scale.get("status") or {}).get("replicas", 0)}


class ScaleHandler(BaseHandler):
    async def target(self, kind, namespace, name):
        handle = self.caller()
        resource = await targets.resolve(self.cluster.api, handle, kind)
        self.audit_targets = [audit_targets.of_resource(resource, namespace, name)]
        if "scale" not in resource.subresources:
            raise bad_request("%s has no scale subresource" % kind)
        targets.check_scope(resource, namespace, kind)
        return handle, resource.path(namespace, name, "scale")

    async def get(self, kind, name, namespace=None):
        handle, path = await self.target(kind, namespace, name)
        self.write_json(counts(await handle.get(path)))

    async def put(self, kind, name, namespace=None):
        replicas = params.integer("scaleBy", self.get_query_argument("scaleBy", None),
                                  minimum=0)
        if replicas is None:
            raise bad_request("scaleBy (the desired replica count) is required")
        if replicas > MAX_REPLICAS:
            raise bad_request("scaleBy must be at most %d" % MAX_REPLICAS)
        handle, path = await self.target(kind, namespace, name)
        scale = await handle.request("PATCH", path, body={"spec": {"replicas": replicas}},
                                     content_type="application/merge-patch+json")
        self.write_json(counts(scale))


ROUTES = [
    Route("/api/v1/scale/{kind}/{namespace}/{name}", ScaleHandler, "scale-namespaced",
          max_body=COMMAND_BODY,
          summary="Replica counts {desiredReplicas, actualReplicas} (GET); PUT ?scaleBy=n sets "
                  "the desired count"),
    Route("/api/v1/scale/{kind}/{name}", ScaleHandler, "scale-cluster",
          max_body=COMMAND_BODY,
          summary="Replica counts of a cluster-scoped custom object (GET, PUT ?scaleBy=n)"),
]
