"""Rows (an object and its precomputed keys, query/properties.py) and the filter, sort and page
over them that query/listquery.py's parameters say: the one implementation every list's
selection runs (pure).
"""

from dashboard_api.query.properties import keys_of, position


class Row:
    """One object of a list and what it is selected by: ``keys``, (filter text, sort value, ...)
    of each property (properties.keys_of), or None until the list computes them from the
    object's summary; ``item``: that summary, when the list computed it; ``facts``: what the
    kind's list status reads of it (the watch cache keeps them per row)."""

    __slots__ = ("obj", "namespace", "name", "keys", "item", "facts")

    def __init__(self, obj, namespace, name, keys, item=None, facts=None):
        self.obj = obj
        self.namespace = namespace
        self.name = name
        self.keys = keys
        self.item = item
        self.facts = facts   # kind.status_facts(obj), when the kind has them


def paginate(items, query):
    if query.page == 0:
        return list(items)
    start = query.items_per_page * (query.page - 1)
    return list(items[start:start + query.items_per_page])


def filter_rows(rows, filters, props):
    """The rows (anything with ``keys``, e.g. Row) whose property text contains each
    filter's value; an unknown property keeps nothing, an empty value matches everything.
    A value that is a search (query/search.py: ``filterBy=name,<query>``, bound to the list's
    kind by the source) keeps the rows it matches."""
    for prop, value in filters:
        if prop not in props:
            return []
        if not value:
            continue
        if isinstance(value, str):
            at = position(props, prop)
            rows = [r for r in rows if value in r.keys[at]]
        else:
            rows = value.filter(rows, props)
    return rows


def sort_rows(rows, sorts, props):
    """The rows in the multi-key, stable order of ``sorts`` (keys from the first unknown
    property on are ignored), from their precomputed keys."""
    names = []
    for prop, ascending in sorts:
        if prop not in props:
            break
        names.append((prop, ascending))
    rows = list(rows)
    for prop, ascending in reversed(names):
        at = position(props, prop) + 1
        rows.sort(key=lambda r: r.keys[at], reverse=not ascending)
    return rows


def select_rows(rows, query, props, filterable=True, filters=None):
    """(every selected row in order, totalItems); paginate() takes the page. ``filters``:
    the query's, bound to the rows' kind (query/search.py bind_filters), when given."""
    if filterable:
        rows = filter_rows(rows, query.filters if filters is None else filters, props)
    total = len(rows)
    if query.sorts:
        rows = sort_rows(rows, query.sorts, props)
    return rows, total


class _Keyed:
    __slots__ = ("item", "keys")
    obj = namespace = None

    def __init__(self, item, keys):
        self.item = item
        self.keys = keys


def select_items(items, query, props, filterable=True):
    """(page of items, totalItems) for ``query``; event lists pass ``filterable=False``. The
    items' keys are computed, then selected as the list pipeline selects rows."""
    rows = [_Keyed(item, keys_of(item, props)) for item in items]
    order, total = select_rows(rows, query, props, filterable)
    return [row.item for row in paginate(order, query)], total
