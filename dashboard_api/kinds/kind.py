"""One declaration per resource kind: everything the project knows about it (issue #21).

``Kind(name, plural=..., item=..., ...)`` is the whole of a kind. The routes
(handlers/resources.py), the watch cache (its projection and join indexes), the list pipeline
(properties, related reads, status block, metrics), the details and sublists, and the OpenAPI
document (``item_fields``/``detail_fields``, checked against what the builders return by
tests/unit/kinds/test_table.py) all read it; nothing elsewhere branches on a kind's name.

How to declare a kind (dashboard_api/kinds/table.py holds the table):

1. write ``dashboard_api/summaries/<family>.py`` with pure ``item(obj, rel)`` and
   ``detail(obj, rel)`` building the reference's wire shape (summaries.common.object_meta and
   type_meta; ``"errors": []`` in a detail that has an errors field), plus any Sublist of the kind
   (summaries/events.py ``RESOURCE_EVENTS`` is the usual ``.../event`` route);
2. add ``Kind(...)`` to ``kinds.TABLE``: at least ``name``, ``group``, ``plural``, ``versions``
   (best first: discovery picks the first the server serves), ``namespaced``, ``list_key``,
   ``item``, ``detail``, and ``item_fields``/``detail_fields`` naming the top-level fields the
   builders return (the schema test fails otherwise);
3. if the summaries read less than the whole object, declare ``projection`` (kinds/projection.py);
   if they join on another object, name the index in ``indexes`` (kinds/joins.py);
4. give the service identity list and watch on it in ``conf/kubernetes/rbac.yaml`` (else its lists
   pass through to the API server, which is correct but slower), and write its tests in
   tests/resources/. The list, namespaced list, detail and sublist routes appear by themselves.

Fields (keyword arguments; only ``name``, ``plural`` and ``item`` are required):

  where it is served
    name          route segment and lower-case wire kind ("pod")
    group, plural, versions, namespaced
                  API group ("" = core), resource plural, the versions understood (best first;
                  never one hard-coded version), and the scope
  what the cache keeps
    cached        False: never cached (secrets); its lists always go to the API server.
                  OPT_IN: cached only when --watch-cache-opt-in names the kind (leases: every
                  node heartbeat is a watch event, tests/bench/bench_leases.py measures it)
    projection    kinds.projection.Shape: what of each object is kept (default: all of it but
                  managedFields and the last-applied annotation)
    indexes       {index name: value_of(obj) -> (values...)}: the joins summaries make
                  (summaries.related.Related.by_controller reads "controller", events_by_object
                  "involved"); kinds/joins.py has the usual ones. A query.fields.Field (one
                  field's value: a node's pods "node", an object's events "named") is kept
                  sorted instead, and answers the field selectors asking that field to equal
                  a value (lists/cachesource.py) without a walk of the namespaces
  the list
    list_key      the array's key in the list envelope ("pods", "deployments", "items", ...)
    item          pure ``item(obj, rel) -> list item`` (``rel``: summaries.related.Related)
    list_needs    keys of reads.STANDARD the items read from ``rel`` ("pods", "events", ...),
                  fetched in the list's namespaces; a forbidden one becomes an ``errors`` entry
    list_status   pure ``(raw, rel) -> ResourceStatus`` or None (no ``status`` block)
    status_facts  pure ``(obj) -> facts`` or None: what list_status needs of an object alone
    status_split  pure ``(facts) -> (bucket, key or None)``: the object's bucket from its facts
                  alone, and a key when ``rel`` may change it; with ``status_counted``, pure
                  ``(counts, [{bucket: {key: facts}}], rel) -> ResourceStatus``, the watch
                  cache keeps list status counters per event (issue #19) (computed once per
                  change in the cache; passed as ``facts=``)
    key_item      pure ``(obj) -> partial item`` holding what ``properties`` read (default: the
                  item without related data); the cache computes sort/filter keys from it
    properties    query/properties.py properties (default: name, creationTimestamp, namespace)
    filterable    False for event lists (sort and page only)
    search        query.search.Facets: what a search matches beyond names, namespaces and
                  labels: the status the list shows (default: its ``status`` property, if
                  any), the container images, the node (query/search.py)
    keep          pure ``keep(obj) -> bool`` or None: objects it rejects are never listed
    one_by_one    True for namespaces: "all" for a caller who may not list them is the ones
                  they may get, read one by one (other cluster kinds: the API server's 403;
                  namespaced kinds: the list over the namespaces where they may list them)
    page_needs, finish
                  per page item: ``page_needs(obj) -> [Need]``, then ``finish(item, obj, rel)``
    metrics       kinds.members.Members or None: which metric series an item sums (its own
                  pod, its node, the pods it controls); the list carries ``cumulativeMetrics``
  the detail and related routes
    detail        pure ``detail(obj, rel) -> dict`` or None (no detail route)
    detail_needs  pure ``(obj, rel) -> [reads.Need]``, asked again until nothing new is needed
    embeds        reads.Embed: sublists inlined in the detail (e.g. the node's podList)
    sublists      reads.Sublist: related routes /{name}/{ns}/{obj}/{suffix}
  the wire schema (/apidocs.json)
    item_fields, detail_fields
                  {top-level field: JSON type or None (any)} beyond objectMeta, typeMeta (and
                  the detail's errors); the fields of embeds and metrics are added by themselves

Custom resources: ``Kind.of_crd(crd, resource)`` builds the spec of a CRD's objects from the CRD
(handlers/customresources.py), through the same type.
"""
from dashboard_api.kinds.decoding import decoder as projection_decoder, \
    projects as decode_projects
from dashboard_api.kinds.projection import WHOLE, compile as compile_projection
from dashboard_api.query import properties
from dashboard_api.query.search import Facets
from dashboard_api.summaries.related import EMPTY as _EMPTY

OPT_IN = "opt-in"   # Kind.cached: only when --watch-cache-opt-in names the kind


def _no_needs(obj, rel):
    return ()


class Kind:
    def __init__(self, name, *, plural, item, group="", versions=("v1",), namespaced=True,
                 list_key="items", cached=True, projection=WHOLE, indexes=None,
                 list_needs=(), list_status=None, status_facts=None, key_item=None,
                 properties=properties.COMMON, filterable=True, keep=None, page_needs=None,
                 finish=None, one_by_one=False, metrics=None, detail=None, detail_needs=None,
                 embeds=(), sublists=(), item_fields=None, detail_fields=None, status_split=None,
                 status_counted=None, search=None):
        self.name = name
        self.group = group
        self.plural = plural
        self.versions = tuple(versions)
        self.namespaced = namespaced
        self.cached = cached
        self.projection = projection
        self.slim = compile_projection(projection)
        self.decode = projection_decoder(projection, self.slim)   # typed where it pays
        self.decode_projects = decode_projects(projection)   # else Cached.to_row does
        self.indexes = dict(indexes or {})
        self.list_key = list_key
        self.item = item
        self.list_needs = tuple(list_needs)
        self.list_status = list_status
        self.status_facts = status_facts
        self.status_split = status_split       # see the docstring: counters per event
        self.status_counted = status_counted if status_split is not None else None
        self.key_item = key_item or (lambda obj: item(obj, _EMPTY))
        self.properties = properties
        self.filterable = filterable
        self.search = search if search is not None else Facets.of_properties(properties)
        self.keep = keep
        self.page_needs = page_needs
        self.finish = finish
        self.one_by_one = one_by_one
        self.metrics = metrics
        self.detail = detail
        self.detail_needs = detail_needs or _no_needs
        self.embeds = tuple(embeds)
        self.sublists = tuple(sublists)
        self.item_fields = dict(item_fields or {})
        self.detail_fields = dict(detail_fields or {})
        # What the pipeline adds is part of the schema too: embedded lists, metrics.
        for embed in self.embeds:
            self.detail_fields.setdefault(embed.field, "object")
        if metrics is not None:
            self.item_fields.setdefault("metrics", None)   # {name: Metric}, or null
            if metrics.detail:
                self.detail_fields.setdefault("metrics", "array")
                self.detail_fields.setdefault("warning", "string")
            missing = set(metrics.needs) - set(self.list_needs)
            if missing:
                raise ValueError("%s: its metrics read %s, which its list does not"
                                 % (name, sorted(missing)))

    def sublist(self, suffix):
        for sub in self.sublists:
            if sub.suffix == suffix:
                return sub
        raise KeyError("%s has no sublist %s" % (self.name, suffix))

    @classmethod
    def of_crd(cls, name, resource, item):
        """The spec of a CRD's objects (``resource``: the discovery.Resource of its first served
        version; ``item``: its item builder): served where the CRD says, never cached, the
        common properties, no detail route of the table's shape."""
        return cls(name, group=resource.group, plural=resource.plural,
                   versions=(resource.version,), namespaced=resource.namespaced, item=item,
                   cached=False)

    def __repr__(self):
        return "Kind(%s)" % self.name
