"""The read routes of every kind, generated from the kinds table (dashboard_api/kinds/table.py).

Per row: ``/api/v1/{kind}`` and, for namespaced kinds, ``/api/v1/{kind}/{namespace}`` (lists; the
namespace segment may be a comma list or a single space for all); ``.../{name}`` (detail) when the
row has a detail; ``.../{name}/{suffix}`` for each of its sublists. Plus the generic
``/api/v1/{kind}/{namespace}/{name}/horizontalpodautoscaler``.

The handlers only translate HTTP: the work is in the list pipeline (lists/pipeline.py Pipeline).
"""

from dashboard_api.handlers.base import BaseHandler
from dashboard_api.kinds import table as kinds
from dashboard_api.query import listquery
from dashboard_api.query.reads import Namespaces
from dashboard_api.serving.routes import Route
from dashboard_api.summaries import autoscaling


class ResourceHandler(BaseHandler):
    def initialize(self, route=None, kind=None, suffix=None, **kw):
        super().initialize(route=route, **kw)
        self.kind = kinds.get(kind) if kind else None
        self.suffix = suffix

    def arg(self, name):
        return self.get_query_argument(name, None)

    def start(self):
        """The request's Fetch and Query: 401 without a token, 400 for bad query values."""
        fetch = self.reads()
        return fetch, listquery.parse(self.arg)


class ListHandler(ResourceHandler):
    async def get(self, namespace=None):
        fetch, query = self.start()
        await self.write_answer(await self.cluster.pipeline.answer(
            fetch, self.kind, Namespaces.parse(namespace), query, self.held_tags()))


class DetailHandler(ResourceHandler):
    async def get(self, name, namespace=None):
        fetch, query = self.start()
        self.write_json(await self.cluster.pipeline.detail(fetch, self.kind, namespace, name,
                                                           query, self.arg))


class SublistHandler(ResourceHandler):
    async def get(self, name, namespace=None):
        fetch, query = self.start()
        parent = await fetch.get(self.kind, namespace, name)
        await self.write_list(await self.cluster.pipeline.sublist(
            fetch, parent, self.kind.sublist(self.suffix), query, self.arg))


class AutoscalersHandler(ResourceHandler):
    """The autoscalers in a namespace whose scale target is {kind}/{name}."""

    async def get(self, kind, namespace, name):
        fetch, query = self.start()
        hpa = kinds.get("horizontalpodautoscaler")
        raw = [h for h in await fetch.list(hpa, Namespaces.one(namespace))
               if autoscaling.targets(h, kind, name)]
        self.write_json(await self.cluster.pipeline.assemble(fetch, hpa, raw,
                                                             Namespaces.one(namespace), query))


def routes_of(kind):
    base = "/api/v1/" + kind.name
    obj = base + ("/{namespace}/{name}" if kind.namespaced else "/{name}")
    args = {"kind": kind.name}
    out = [Route(base, ListHandler, kind.name + "-list", kwargs=args,
                 summary="Lists %s objects of all namespaces" % kind.name)]
    if kind.namespaced:
        out.append(Route(base + "/{namespace}", ListHandler, kind.name + "-list-namespaced",
                         kwargs=args, summary="Lists %s objects of one or more namespaces"
                         % kind.name))
    if kind.detail is not None:
        out.append(Route(obj, DetailHandler, kind.name + "-detail", kwargs=args,
                         summary="Reads one %s with its related objects" % kind.name))
    for sub in kind.sublists:
        out.append(Route(obj + "/" + sub.suffix, SublistHandler,
                         "%s-%s" % (kind.name, sub.suffix), kwargs=dict(args, suffix=sub.suffix),
                         summary="Lists the %s objects related to one %s" % (sub.kind, kind.name)))
    return out


ROUTES = [r for kind in kinds.TABLE for r in routes_of(kind)] + [
    Route("/api/v1/{kind}/{namespace}/{name}/horizontalpodautoscaler", AutoscalersHandler,
          "autoscalers-of-resource",
          summary="Lists the horizontal pod autoscalers that scale one resource"),
]
