"""Log text as fetched with ``timestamps=true`` -> lines of (timestamp, content).

The kubelet writes RFC 3339 timestamps with the trailing zeros of the fraction trimmed
("...:05.1Z" comes before "...:05.12Z"), so plain string order is not time order. Each line
also gets a sort key, the same instant written with a fixed nine-digit fraction in UTC.
"""

import datetime
import re

# A line that could not be split into timestamp and content gets this timestamp (as upstream).
NO_TIMESTAMP = "0"

_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))$")


class LogLine:
    __slots__ = ("timestamp", "content", "key")

    def __init__(self, timestamp, content):
        self.timestamp = timestamp
        self.content = content
        self.key = sort_key(timestamp)


def parse_rfc3339(text):
    """An aware UTC datetime and the nanoseconds within its second, or None."""
    m = _RFC3339.match(text)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, sign, oh, om = m.groups()
    try:
        moment = datetime.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s),
                                   tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    if sign:
        shift = datetime.timedelta(hours=int(oh), minutes=int(om))
        moment = moment - shift if sign == "+" else moment + shift
    return moment, int((frac or "").ljust(9, "0"))


def sort_key(timestamp):
    """The fixed-width UTC form of a timestamp for ordering; anything else is kept as is."""
    if len(timestamp) == 30 and timestamp[-1] == "Z" and timestamp[19] == ".":
        return timestamp  # already "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ"
    parsed = parse_rfc3339(timestamp)
    if parsed is None:
        return timestamp
    moment, nanos = parsed
    return "%s.%09dZ" % (moment.strftime("%Y-%m-%dT%H:%M:%S"), nanos)


def parse_line(text):
    """Splits "<timestamp> <content>"; a line not starting with a digit keeps it all as content."""
    if text[:1].isdigit():
        timestamp, sep, content = text.partition(" ")
        if sep:
            return LogLine(timestamp, content)
    return LogLine(NO_TIMESTAMP, text)


def parse_lines(text):
    """Every non-empty line of the text, in order."""
    return [parse_line(line) for line in text.split("\n") if line]
