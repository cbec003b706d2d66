"""The query of a list request: filter, sort, page and metrics, parsed from its arguments (pure).

Query parameters (reference §2, its upstream bugs fixed):

- ``filterBy=prop,value[,prop,value...]``: an item is kept when, for every pair, the property's
  text contains the value (case-sensitive substring). An unknown property keeps nothing; an empty
  value matches everything. Time properties match on their RFC 3339 text (upstream crashed).
  The ``name`` property's value is a search query (query/search.py, issue #38): a plain word
  is the name containing it, ignoring case, and ``label:``, ``ns:``, ``status:``, ``node:``,
  ``image:``, ``kind:`` terms narrow further; a malformed query is a 400 naming the term. The
  upstream web UI's search page and its lists' filter boxes send exactly this parameter.
- ``sortBy=a|d,prop[,a|d,prop...]``: multi-key sort, stable. Strings compare by code point (the
  same order as UTF-8 bytes), times by whole Unix seconds. Keys from the first unknown property on
  are ignored (upstream: such pairs compare equal).
- ``itemsPerPage`` (default 10) and ``page`` (1-based, default 1); ``page=0`` means every item,
  ``itemsPerPage=0`` an empty page, a page past the end an empty page.
- ``totalItems`` counts the filtered items before paging.

- ``metricNames=a,b`` (see query/metricnames.py) and ``aggregations=sum,max`` (``sum``,
  ``avg``, ``min``, ``max``; default ``sum``): parsed here, used by the metrics list decorator.

Malformed values (odd pair counts, an order other than ``a``/``d``, non-integer or negative
sizes and pages, unknown metric names or aggregations) are a 400, where upstream silently
ignored them.

A list names its properties with a mapping ``{name: Property}`` (query/properties.py); the
filter, sort and page over rows is query/rows.py.
"""

from dashboard_api.query import metricnames, search
from dashboard_api.serving import params
from dashboard_api.serving.errors import bad_request

DEFAULT_ITEMS_PER_PAGE = 10


class Query:
    __slots__ = ("filters", "sorts", "items_per_page", "page", "metric_names", "aggregations")

    def __init__(self, filters=(), sorts=(), items_per_page=DEFAULT_ITEMS_PER_PAGE, page=1,
                 metric_names=(), aggregations=("sum",)):
        self.filters = tuple(filters)        # ((property, value or search.Search), ...)
        self.sorts = tuple(sorts)            # ((property, ascending), ...)
        self.items_per_page = items_per_page
        self.page = page                     # 1-based; 0 = every item
        self.metric_names = tuple(metric_names)  # as asked for (aliases kept)
        self.aggregations = tuple(aggregations)

    def __repr__(self):
        return "Query(%r, %r, %r, %r)" % (self.filters, self.sorts, self.items_per_page,
                                          self.page)


FIRST_TEN = Query()


def _pairs(name, raw):
    if not raw:
        return []
    tokens = raw.split(",")
    if len(tokens) % 2:
        raise bad_request("%s must be comma-separated pairs, got %r" % (name, raw))
    return [(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]


def parse(arg):
    """A Query from ``arg(name) -> str or None`` (the request's query arguments)."""
    filters = [(prop, search.parse(value) if prop == "name" else value)
               for prop, value in _pairs("filterBy", arg("filterBy"))]
    sorts = []
    for order, prop in _pairs("sortBy", arg("sortBy")):
        if order not in ("a", "d"):
            raise bad_request("sortBy order must be 'a' or 'd', got %r" % order)
        sorts.append((prop, order == "a"))
    per_page = params.integer("itemsPerPage", arg("itemsPerPage"), DEFAULT_ITEMS_PER_PAGE, 0)
    return Query(filters, sorts, per_page, params.integer("page", arg("page"), 1, 0),
                 _names("metricNames", arg("metricNames"), metricnames.canonical,
                        metricnames.known()),
                 _names("aggregations", arg("aggregations"), metricnames.AGGREGATIONS.count,
                        ", ".join(metricnames.AGGREGATIONS)) or ("sum",))


def _names(param, raw, valid, known):
    """A comma list, de-duplicated in order; a 400 for a name ``valid`` rejects."""
    out = []
    for name in (raw or "").split(","):
        name = name.strip()
        if not name or name in out:
            continue
        if not valid(name):
            raise bad_request("%s: unknown name %r (known: %s)" % (param, name, known))
        out.append(name)
    return tuple(out)


