"""The log view: how much to fetch, what was cut off, and the LogDetails answer.

Reads are bounded as upstream: from the beginning at most 500,000 bytes, from the end at most
5,000 lines (and, unlike upstream, at most 8 MiB of them, since lines can be long). One unit more
than the limit is fetched, so ``truncated`` is true only when the log really holds more than was
read (upstream also says so when a log is exactly the limit long).
"""

from dashboard_api.logs.lines import NO_TIMESTAMP, parse_lines, sort_key
from dashboard_api.logs.selection import BEGINNING, select

BYTE_READ_LIMIT = 500_000
LINE_READ_LIMIT = 5_000
TAIL_BYTE_LIMIT = 8 << 20


class ReadPlan:
    """Fetch the first ``limit`` bytes (``by_bytes``) or the last ``limit`` lines."""

    __slots__ = ("by_bytes", "limit")

    def __init__(self, by_bytes, limit):
        self.by_bytes = by_bytes
        self.limit = limit

    @classmethod
    def for_position(cls, position, tail_lines=None):
        if position == BEGINNING:
            return cls(True, BYTE_READ_LIMIT)
        limit = LINE_READ_LIMIT if tail_lines is None else min(tail_lines, LINE_READ_LIMIT)
        return cls(False, limit)

    def params(self):
        """Log query parameters of the API server; timestamps always, they name the lines."""
        key = "limitBytes" if self.by_bytes else "tailLines"
        return {key: self.limit + 1, "timestamps": "true"}

    def trim(self, raw, dropped_front=False, since=None):
        """(lines, cut): the parsed lines within the limit, and whether the log held more.

        ``dropped_front``: the buffer lost the oldest bytes; ``since``: an RFC 3339 time before
        which lines are left out (the API server only honours whole seconds).
        """
        cut = dropped_front or (self.by_bytes and len(raw) > self.limit)
        if dropped_front:
            raw = raw[raw.find(b"\n") + 1:]
        if self.by_bytes and len(raw) > self.limit:
            # Keep whole lines only: the last one was probably split by the byte limit.
            raw = raw[:self.limit]
            end = raw.rfind(b"\n")
            raw = raw[:end + 1] if end >= 0 else raw
        lines = parse_lines(raw.decode("utf-8", "replace"))
        if not self.by_bytes and len(lines) > self.limit:
            lines = lines[len(lines) - self.limit:] if self.limit else []
            cut = True
        if since is not None:
            first = sort_key(since)
            skip = 0
            while skip < len(lines) and lines[skip].timestamp != NO_TIMESTAMP \
                    and lines[skip].key < first:
                skip += 1
            if skip:
                lines = lines[skip:]
                # The read reached back past sinceTime, so nothing asked for was left out there.
                cut = cut and self.by_bytes
        return lines, cut


class LogBuffer:
    """Collects a fetched log within a byte budget; reading from the end keeps the newest bytes."""

    def __init__(self, plan):
        self.keep_newest = not plan.by_bytes
        self.budget = TAIL_BYTE_LIMIT if self.keep_newest else plan.limit + 1
        self.data = bytearray()
        self.dropped = False

    @property
    def full(self):
        """Nothing more is needed (reading from the beginning past the budget)."""
        return self.dropped and not self.keep_newest

    @property
    def lost_oldest(self):
        return self.dropped and self.keep_newest

    def add(self, chunk):
        self.data += chunk
        excess = len(self.data) - self.budget
        if excess > 0:
            self.dropped = True
            if self.keep_newest:
                del self.data[:excess]
            else:
                del self.data[self.budget:]


def render(line, timestamps):
    """A line as the specification sends it: a string, with its timestamp when asked."""
    if timestamps and line.timestamp != NO_TIMESTAMP:
        return line.timestamp + " " + line.content
    return line.content


def render_object(line, _timestamps=None):
    """A line as upstream's LogLine, which the upstream web UI reads (--web-ui-compat); the
    timestamp is always there, apart from the content."""
    return {"timestamp": line.timestamp, "content": line.content}


def log_details(pod, container, lines, cut, plan, selection, timestamps, line_objects=False):
    """The LogDetails answer for lines fetched with ``plan`` (``cut``: the log held more);
    ``line_objects``: lines as {timestamp, content} objects instead of strings."""
    page = select(lines, selection)
    shape = render_object if line_objects else render
    # Truncated: the page reaches the end of what was read, beyond which the log was cut off.
    truncated = cut and (page.reaches_newest if plan.by_bytes else page.reaches_oldest)
    return {
        "info": {
            "podName": pod,
            "containerName": container,
            "initContainerName": "",
            "fromDate": page.from_date,
            "toDate": page.to_date,
            "truncated": truncated,
        },
        "selection": page.selection.to_json(),
        "logs": [shape(line, timestamps) for line in page.lines],
    }
