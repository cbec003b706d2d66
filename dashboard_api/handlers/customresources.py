"""The objects of a custom resource definition (reference §4.5, §5.5):

``/api/v1/crd/{namespace}/{crd}/object`` (list; the namespace segment takes the list syntax and
is ignored for cluster-scoped CRDs), ``.../{object}`` (detail) and ``.../{object}/event``.
``{crd}`` is the CRD's name (``plural.group``). The CRD is read with the caller's token first;
its first served version says where the objects live. The CRD list and detail are ordinary
rows of the kinds table.
"""

from dashboard_api import dataselect, kinds, listing
from dashboard_api.errors import not_found
from dashboard_api.handlers.resources import ResourceHandler
from dashboard_api.reads import ALL, Namespaces
from dashboard_api.routes import Route
from dashboard_api.summaries import crds, events
from dashboard_api.summaries.common import name as name_of

_EVENTS = events.resource_events()


def object_kind(crd, resource):
    """A kinds-table-like row for one CRD's objects, built per request."""
    return kinds.Kind(name_of(crd), resource.group, resource.plural, resource.namespaced,
                      "items", crds.object_summary(crd), versions=(resource.version,),
                      properties=dataselect.COMMON)


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
        out = await listing.assemble(fetch, object_kind(definition, resource), raw, namespaces,
                                     query)
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
        self.write_json(await listing.sublist(fetch, obj, _EVENTS, query, self.arg))


_BASE = "/api/v1/crd/{namespace}/{crd}"

ROUTES = [
    Route(_BASE + "/object", ObjectListHandler, "crd-object-list",
          summary="Lists the objects of a custom resource definition"),
    Route(_BASE + "/{name}", ObjectDetailHandler, "crd-object-detail",
          summary="Reads one object of a custom resource definition"),
    Route(_BASE + "/{name}/event", ObjectEventsHandler, "crd-object-event",
          summary="Lists the events of one object of a custom resource definition"),
]
