"""The first rows of a sort whose index is being built, kept per event meanwhile (issue #41).

A large store's sort asked for the first time is answered by a partial selection in the
executor (cache/view.py ``partial_page``: 100-200 ms at 200,000 rows), and its index is then
built in the background (cache/orders.py), which takes a second or more. The same sort asked
again meanwhile (the next page, a refresh, a second user) was a partial selection again, beside
the build: 300-800 ms. So the first selection picks a few more rows than its page (DEPTH more)
and they are kept here, with every event since the rows were copied for it: a page asked again
is then read off them, each event applied to them first (a bisection each), no selection.

What is kept stays exact: ``rows`` are always the first ``depth`` rows of the scope in the
sort's order. An event adds a row that belongs among them (``depth`` grows by one) and removes
one that was among them (``depth`` shrinks by one); a row beyond them, added or removed, moves
only the total. A page beyond ``depth`` is a selection again. Kept at most until the index is
there, LOG_LIMIT events or AGE seconds.
"""

from __future__ import annotations

import bisect
from typing import Any, Callable

DEPTH = 200          # rows kept beyond the first page asked
LOG_LIMIT = 4096     # events kept for one (their old rows with them), before it is let go of
AGE = 30.0           # seconds one is kept at most


class Interim:
    """The first rows of a scope for one sort and filter (see the module docstring), filled
    by ``fill`` once the selection answers; ``log`` gets every event from its creation."""

    __slots__ = ("key", "passes", "made", "log", "rows", "keys", "depth", "total", "complete")

    def __init__(self, key: Callable[[Any], Any], passes: Callable[[Any], bool], made: float):
        self.key = key          # a row's index key (cache/sorted.py ``key_function``)
        self.passes = passes    # whether a row is in the scope and passes the filters
        self.made = made
        self.log = []           # (old, new) of every event since the rows were copied
        self.rows = None        # the first ``depth`` rows, once filled
        self.keys = None        # their keys
        self.depth = 0
        self.total = 0
        self.complete = False   # every row of the scope is kept

    def fill(self, first: list, total: int) -> None:
        """The selection's answer: the first rows in key order, and the scope's total."""
        self.rows = list(first)
        self.keys = [self.key(row) for row in self.rows]
        self.depth = len(self.rows)
        self.total = total
        self.complete = self.depth == total

    def page(self, start: int, stop: int) -> tuple[list, int] | None:
        """(the rows ``start:stop``, the total) as of now, or None when they are not kept
        (not filled yet, or beyond what is kept)."""
        if self.rows is None or len(self.log) > LOG_LIMIT:
            return None
        self._catch_up()
        if stop > self.depth and not self.complete:
            return None
        return self.rows[start:stop], self.total

    def _catch_up(self):
        log, self.log = self.log, []
        for old, new in log:
            if old is not None and self.passes(old):
                self.total -= 1
                self._remove(old)
            if new is not None and self.passes(new):
                self.total += 1
                self._add(new)

    def _remove(self, row):
        value = self.key(row)
        at = bisect.bisect_left(self.keys, value)
        if at < len(self.rows) and self.rows[at] is row:
            del self.rows[at], self.keys[at]
            self.depth -= 1

    def _add(self, row):
        value = self.key(row)
        at = bisect.bisect_left(self.keys, value)
        if at < len(self.rows) or self.complete:   # among the first rows (or all are kept)
            self.rows.insert(at, row)
            self.keys.insert(at, value)
            self.depth += 1
