"""Which lines of a fetched log to show: a window of offsets around a reference line.

A client pages through a log by sending back the selection of the previous answer with its
offsets shifted. The reference line is named by its timestamp and its place among the lines
that share that timestamp, so it stays put while the log grows (reference section 9.4).
"""

import bisect

from dashboard_api.logs.lines import sort_key

BEGINNING, END = "beginning", "end"
NEWEST, OLDEST = "newest", "oldest"
PAGE_LINES = 100


class LineId:
    """A line named by timestamp and ``line_num``: 1-based from the start of the run of lines
    with that timestamp when positive, from its end when negative (-1 is the last)."""

    __slots__ = ("timestamp", "line_num")

    def __init__(self, timestamp, line_num=0):
        self.timestamp = timestamp
        self.line_num = line_num

    def to_json(self):
        return {"timestamp": self.timestamp, "lineNum": self.line_num}


class Selection:
    """Lines [reference + offset_from, reference + offset_to); ``position`` says from which end
    of the log the fetch is made (``beginning`` or ``end``)."""

    __slots__ = ("reference", "offset_from", "offset_to", "position")

    def __init__(self, reference, offset_from, offset_to, position):
        self.reference = reference
        self.offset_from = offset_from
        self.offset_to = offset_to
        self.position = position

    @classmethod
    def last_lines(cls, count=PAGE_LINES):
        """The default: the newest ``count`` lines."""
        return cls(LineId(NEWEST), 1 - count, 1, END)

    @classmethod
    def empty(cls):
        return cls(LineId(""), 0, 0, "")

    def to_json(self):
        return {"referencePoint": self.reference.to_json(), "offsetFrom": self.offset_from,
                "offsetTo": self.offset_to, "logFilePosition": self.position}


class Page:
    """The chosen lines, where they sit in the fetched log, and the selection to send back."""

    __slots__ = ("lines", "start", "stop", "total", "selection")

    def __init__(self, lines, start, stop, total, selection):
        self.lines = lines
        self.start = start
        self.stop = stop
        self.total = total
        self.selection = selection

    @property
    def from_date(self):
        return self.lines[0].timestamp if self.lines else ""

    @property
    def to_date(self):
        return self.lines[-1].timestamp if self.lines else ""

    @property
    def reaches_oldest(self):
        return bool(self.lines) and self.start == 0

    @property
    def reaches_newest(self):
        return bool(self.lines) and self.stop == self.total


def locate(lines, keys, line_id):
    """Index of the line named by ``line_id`` or None. ``keys`` are the lines' sort keys."""
    if line_id.timestamp in (NEWEST, "") or not lines:
        return len(lines) - 1
    if line_id.timestamp == OLDEST:
        return 0
    wanted = sort_key(line_id.timestamp)
    first = bisect.bisect_left(keys, wanted)
    run = 0
    while first + run < len(keys) and keys[first + run] == wanted:
        run += 1
    place = run + line_id.line_num if line_id.line_num < 0 else line_id.line_num - 1
    return first + place if 0 <= place < run else None


def line_id(lines, index):
    """Names line ``index``. Counting from the end of its run is preferred, since lines before it
    never change; when the run is the newest one, more lines may join it, so count from its start."""
    key = lines[index].key
    step = 1 if lines[-1].key == key else -1
    num = step
    while 0 <= index - num < len(lines) and lines[index - num].key == key:
        num += step
    return LineId(lines[index].timestamp, num)


def select(lines, selection):
    """The Page that ``selection`` asks for; a window running past either end of the log is
    shifted back inside it, keeping its size."""
    total = len(lines)
    wanted = selection.offset_to - selection.offset_from
    keys = [line.key for line in lines]
    ref = locate(lines, keys, selection.reference)
    if ref is None or wanted <= 0 or total == 0:
        return Page([], 0, 0, total, Selection.empty())
    start, stop = ref + selection.offset_from, ref + selection.offset_to
    if wanted > total:
        start, stop = 0, total
    elif stop > total:
        start, stop = total - wanted, total
    elif start < 0:
        start, stop = 0, wanted
    # Re-anchor on the middle line: lines appended or rotated away at the ends leave it alone.
    mid = total // 2
    anchored = Selection(line_id(lines, mid), start - mid, stop - mid, selection.position)
    return Page(lines[start:stop], start, stop, total, anchored)
