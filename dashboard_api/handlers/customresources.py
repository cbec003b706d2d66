"""Custom resource definitions and their objects (reference §4.5, §5.5):

``/api/v1/crd/{crd}`` (the CRD's detail with its first ten objects),
``/api/v1/crd/{namespace}/{crd}/object`` (list; the namespace segment takes the list syntax and
is ignored for cluster-scoped CRDs), ``.../{object}`` (detail) and ``.../{object}/event``.
``{crd}`` is the CRD's name (``plural.group``). The CRD is read with the caller's token first;
its first served version says where the objects live. The CRD list is an ordinary row of the
kinds table; the detail is here because its objects' spec is built from the CRD (``Kind.of_crd``).
"""

from dashboard_api.handlers.resources import ResourceHandler
from dashboard_api.kinds import table as kinds
from dashboard_api.kinds.kind import Kind
from dashboard_api.query.listquery import FIRST_TEN
from dashboard_api.query.reads import ALL, Namespaces, Need
from dashboard_api.serving.errors import not_found
from dashboard_api.serving.routes import Route
from dashboard_api.summaries import crds, events
from dashboard_api.summaries.common import name as name_of
from dashboard_api.summaries.related import Related


def object_kind(crd, resource):
    """The spec of one CRD's objects, built per request from the CRD."""
    return Kind.of_crd(name_of(crd), resource, crds.object_summary(crd))


class DefinitionDetailHandler(ResourceHandler):
    async def get(self, name):
        fetch, _ = self.start()
        definition = await fetch.get(kinds.get("crd"), None, name)
        resource = crds.resource_of(definition)
        objects = {"listMeta": {"totalItems": 0}, "items": []}  # it serves no version
        if resource is not None:
            # A related read: a 403 leaves no objects and the error in the detail's errors.
            rel = await fetch.gather([Need("objects", resource, ALL)], Related())
            objects = await self.cluster.pipeline.assemble(fetch, object_kind(definition, resource),
                                             rel["objects"], ALL, FIRST_TEN)
        out = crds.detail(definition, objects)
        out["errors"] = fetch.errors
        self.write_json(out)


class CustomObjectHandler(ResourceHandler):
    async def definition(self, fetch, crd):
        """The CRD and the Resource of its objects; 404 when it serves no version."""
        definition = await fetch.get(kinds.get("crd"), None, crd)
        resource = crds.resource_of(definition)
        if resource is None:
            raise not_found("customresourcedefinition %s serves no version" % crd)
        return definition, resource

    async def parent(self, fetch, namespace, crd, name):
        definition, resource = await self.definition(fetch, crd)
        return definition, await fetch.get(resource, namespace, name)


class ObjectListHandler(CustomObjectHandler):
    async def get(self, namespace, crd):
        fetch, query = self.start()
        definition, resource = await self.definition(fetch, crd)
        namespaces = Namespaces.parse(namespace) if resource.namespaced else ALL
        raw = await fetch.list(resource, namespaces)
        out = await self.cluster.pipeline.assemble(fetch, object_kind(definition, resource), raw,
                                                   namespaces, query)
        out["typeMeta"] = crds.list_type_meta(definition)
        self.write_json(out)


class ObjectDetailHandler(CustomObjectHandler):
    async def get(self, namespace, crd, name):
        fetch, _ = self.start()
        definition, obj = await self.parent(fetch, namespace, crd, name)
        out = crds.object_detail(definition, obj)
        out["errors"] = fetch.errors
        self.write_json(out)


class ObjectEventsHandler(CustomObjectHandler):
    async def get(self, namespace, crd, name):
        fetch, query = self.start()
        _, obj = await self.parent(fetch, namespace, crd, name)
        self.write_json(await self.cluster.pipeline.sublist(fetch, obj, events.RESOURCE_EVENTS,
                                                            query, self.arg))


_BASE = "/api/v1/crd/{namespace}/{crd}"

ROUTES = [
    # Named and described as the kinds table's generated detail routes are.
    Route("/api/v1/crd/{name}", DefinitionDetailHandler, "crd-detail",
          summary="Reads one crd with its related objects"),
    Route(_BASE + "/object", ObjectListHandler, "crd-object-list",
          summary="Lists the objects of a custom resource definition"),
    Route(_BASE + "/{name}", ObjectDetailHandler, "crd-object-detail",
          summary="Reads one object of a custom resource definition"),
    Route(_BASE + "/{name}/event", ObjectEventsHandler, "crd-object-event",
          summary="Lists the events of one object of a custom resource definition"),
]
