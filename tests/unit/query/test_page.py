"""The list road's paging call over rows in memory (query/page.py ``ListedRows``): the page,
total and status block of ``select``, objects a kind's ``keep`` rejects never listed, and the
same answer whether the selection runs inline or through the executor's ``run``."""

import asyncio

from dashboard_api.kinds import table as kinds
from dashboard_api.kinds.kind import Kind
from dashboard_api.query import page as query_page
from dashboard_api.query.listquery import Query
from dashboard_api.query.page import ListedRows, Page, select
from dashboard_api.summaries.common import object_meta, type_meta
from dashboard_api.summaries.related import Related


def _pod(name, phase="Running", created="2024-01-01T00:00:00Z"):
    return {"metadata": {"namespace": "a", "name": name, "uid": name,
                         "creationTimestamp": created},
            "spec": {}, "status": {"phase": phase}}


def _page(rows, query, status=True, run=None):
    calls = []

    async def executor(fn, *args):
        calls.append(fn)
        return fn(*args)
    got = asyncio.run(rows.page(query, status, Related(), run or executor))
    return got, calls


def test_a_page_of_listed_rows_is_the_selection_paged():
    kind = kinds.get("pod")
    pods = [_pod("p%d" % i, "Pending" if i % 3 else "Running") for i in range(7)]
    query = Query((("name", "p"),), (("name", False),), 3, 2)
    rows = ListedRows.of_objects(kind, pods)
    got, calls = _page(rows, query)
    order, total, status = select(kind, rows.rows, Related(), query, True)
    assert isinstance(got, Page)
    assert got.rows == order[3:6]
    assert [r.obj["metadata"]["name"] for r in got.rows] == ["p3", "p2", "p1"]
    assert got.total == total == 7
    assert got.status == status and got.status["pending"] == 4
    assert calls == []   # small: inline


def test_large_selections_run_through_the_executor(monkeypatch):
    monkeypatch.setattr(query_page, "OFF_LOOP_ROWS", 3)
    kind = kinds.get("pod")
    rows = ListedRows.of_objects(kind, [_pod("p%d" % i) for i in range(5)])
    got, calls = _page(rows, Query((), (), 2, 1))
    assert calls == [select]
    assert [r.obj["metadata"]["name"] for r in got.rows] == ["p0", "p1"] and got.total == 5


def test_what_keep_rejects_is_never_listed():
    def item(obj, rel):
        return {"objectMeta": object_meta(obj), "typeMeta": type_meta("thing")}
    kind = Kind("thing", plural="things", item=item,
                keep=lambda obj: not obj["metadata"]["name"].startswith("hidden"))
    rows = ListedRows.of_objects(kind, [_pod("a"), _pod("hidden-1"), _pod("b")])
    assert len(rows) == 2
    got, _calls = _page(rows, Query(), status=False)
    assert [r.obj["metadata"]["name"] for r in got.rows] == ["a", "b"]
    assert got.total == 2 and got.status is None
