"""A list's page as its rows' one paging call answers it, and the pure selection behind it.

Every source of a list's rows answers one call, ``await rows.page(query, status, rel, run)``
-> ``Page(rows, total, status)``: the rows of the page in order, ``totalItems`` (the filtered
rows before paging) and the list's status block (or None). The watch cache's rows answer it off
their store's indexes (cache/view.py); rows already in memory (a pass-through LIST, the children
of a sublist) answer it here, by ``select``, the one selection of a list (filter, sort, status).
``rel`` holds the related reads the items and the status read; ``run`` runs work in the
executor (selections over OFF_LOOP_ROWS rows or more).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping, Protocol, Sequence

from dashboard_api.query.listquery import Query
from dashboard_api.query.properties import keys_of
from dashboard_api.query.rows import Row, paginate, select_rows
from dashboard_api.query.search import bind_filters

# The executor's ``run(fn, *args)``: fn(*args) computed off the event loop.
Run = Callable[..., Awaitable[Any]]

# Selections over this many rows, and pages of this many items, are made in the executor: the
# work is pure, and on the event loop it would hold up every other request (tens of ms for
# 2,000 pods).
OFF_LOOP_ROWS = 200


class Page:
    """``rows`` of the page in order, ``total`` rows that pass the filters, the ``status``
    block of the list (None when not asked or the kind has none)."""

    __slots__ = ("rows", "total", "status")

    def __init__(self, rows: Sequence[Row], total: int, status: dict | None = None):
        self.rows = rows
        self.total = total
        self.status = status


class Rows(Protocol):
    """What a list's source gives: rows not read yet, their one paging call, and what every
    page of them depends on (``version()``, known before a page is read; None: unknown)."""

    def __len__(self) -> int:
        ...

    def version(self) -> Any:
        ...

    async def page(self, query: Query, status: bool, rel: Mapping[str, Any], run: Run) -> Page:
        ...


def select(kind: Any, rows: Sequence[Row], rel: Mapping[str, Any], query: Query,
           status: bool) -> tuple[list[Row], int, dict | None]:
    """(the selected rows in order, totalItems, status or None) of ``kind``'s ``rows``: keys for
    rows that do not carry them yet (a pass-through LIST's: their items are built once and kept
    on the row for the page), the query's filter (a search bound to the kind and ``rel``) and
    sort, and the kind's list status."""
    props = kind.properties
    for row in rows:
        if row.keys is None:
            row.item = kind.item(row.obj, rel)
            row.keys = keys_of(row.item, props)
    order, total = select_rows(rows, query, props, kind.filterable,
                               bind_filters(query.filters, kind, rel))
    list_status = None
    if status and kind.list_status:
        if kind.status_facts and rows and all(r.facts is not None for r in rows):
            list_status = kind.list_status(None, rel, facts=[r.facts for r in rows])
        else:
            list_status = kind.list_status([r.obj for r in rows], rel)
    return order, total, list_status


class ListedRows:
    """Rows already in memory (the objects of a pass-through LIST, or those a route read), paged
    by ``select``; the objects ``kind.keep`` rejects are never listed."""

    def __init__(self, kind: Any, rows: list[Row]):
        self.kind = kind
        self.rows = rows if kind.keep is None else [r for r in rows if kind.keep(r.obj)]

    @classmethod
    def of_objects(cls, kind: Any, objects: Sequence[dict]) -> ListedRows:
        return cls(kind, [Row(obj, None, None, None) for obj in objects])

    def __len__(self) -> int:
        return len(self.rows)

    def version(self) -> None:
        """None: rows read now from the API server have nothing to compare a next read with
        (no validator before the page, lists/validators.py)."""
        return None

    async def page(self, query: Query, status: bool, rel: Mapping[str, Any], run: Run) -> Page:
        if len(self.rows) >= OFF_LOOP_ROWS:
            order, total, list_status = await run(select, self.kind, self.rows, rel, query,
                                                  status)
        else:
            order, total, list_status = select(self.kind, self.rows, rel, query, status)
        return Page(paginate(order, query), total, list_status)
