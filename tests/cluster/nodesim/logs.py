"""Per-container log files, laid out and read the way a kubelet would.

Layout: {state_dir}/logs/{namespace}/{pod}/{container}/{instance}.log, one file per container
instance (restart number); each line is "<RFC3339 timestamp, 9 fraction digits, UTC> <text>\n".
"""

import datetime
import os
import re
import time

_TAIL_PROBE = 4096
_TS_RE = re.compile(
    r"^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d\d):(\d\d))$")


def pod_dir(state_dir, namespace, pod):
    return os.path.join(state_dir, "logs", namespace, pod)


def container_dir(state_dir, namespace, pod, container):
    return os.path.join(pod_dir(state_dir, namespace, pod), container)


def log_path(state_dir, namespace, pod, container, instance):
    return os.path.join(container_dir(state_dir, namespace, pod, container), "%d.log" % instance)


def instances(state_dir, namespace, pod, container):
    """Instance numbers that have a log file, ascending."""
    try:
        names = os.listdir(container_dir(state_dir, namespace, pod, container))
    except FileNotFoundError:
        return []
    return sorted(int(n[:-4]) for n in names if n.endswith(".log") and n[:-4].isdigit())


def format_ts(ns):
    """Nanoseconds since the epoch -> '2021-01-02T03:04:05.123456789Z' (fixed width, sortable)."""
    secs, frac = divmod(ns, 1_000_000_000)
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs))
    return "%s.%09dZ" % (base, frac)


def parse_ts(text):
    """RFC 3339 (any fraction, Z or offset) -> nanoseconds since the epoch, or None."""
    m = _TS_RE.match(text)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, _z, sign, oh, om = m.groups()
    moment = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s),
                               tzinfo=datetime.timezone.utc)
    secs = int(moment.timestamp())
    if sign:
        offset = int(oh) * 3600 + int(om) * 60
        secs -= offset if sign == "+" else -offset
    return secs * 1_000_000_000 + int((frac or "0").ljust(9, "0"))


def _last_ts(path):
    """Timestamp of the last line of a file, so new lines keep timestamps increasing."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - _TAIL_PROBE))
            tail = f.read()
    except FileNotFoundError:
        return 0
    lines = tail.rstrip(b"\n").rsplit(b"\n", 1)
    ts = parse_ts(lines[-1].split(b" ", 1)[0].decode("ascii", "replace")) if lines[-1] else None
    return ts or 0


def append_log(state_dir, namespace, pod, container, lines, instance=None):
    """Append lines (str) to a container's log; instance None means the current (highest) one.

    Timestamps are "now", strictly increasing within the file. Returns the timestamps written.
    """
    if instance is None:
        known = instances(state_dir, namespace, pod, container)
        instance = known[-1] if known else 0
    path = log_path(state_dir, namespace, pod, container, instance)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ts = max(time.time_ns(), _last_ts(path) + 1)
    stamps, chunk = [], []
    for line in lines:
        stamps.append(ts)
        chunk.append("%s %s\n" % (format_ts(ts), line.rstrip("\n")))
        ts += 1
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, "".join(chunk).encode("utf-8"))
    finally:
        os.close(fd)
    return [format_ts(t) for t in stamps]


class LogFilter:
    """The kubelet's log options applied to raw file lines (bytes, each ending in a newline)."""

    def __init__(self, timestamps=False, since_ns=None, limit_bytes=None):
        self.timestamps = timestamps
        self.since_ns = since_ns
        self.remaining = limit_bytes  # None: unlimited

    @property
    def exhausted(self):
        return self.remaining is not None and self.remaining <= 0

    def render(self, raw_lines):
        """Output bytes for these lines; stops (and truncates) at the byte limit."""
        out = []
        for raw in raw_lines:
            if self.exhausted:
                break
            stamp, _, text = raw.partition(b" ")
            if self.since_ns is not None:
                ts = parse_ts(stamp.decode("ascii", "replace"))
                if ts is not None and ts < self.since_ns:
                    continue
            line = raw if self.timestamps else text
            if self.remaining is not None:
                line = line[:self.remaining]
                self.remaining -= len(line)
            out.append(line)
        return b"".join(out)


def complete_lines(data):
    """The lines of data that end in a newline (a line still being written is read later)."""
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith(b"\n"):
        lines.pop()
    return lines


def last_lines(lines, n):
    """tailLines: the last n lines; None means all."""
    if n is None:
        return lines
    return lines[max(0, len(lines) - n):] if n > 0 else []
