"""Parsing of query parameter values (pure; a bad value is a 400 naming the parameter)."""

from dashboard_api.serving.errors import bad_request

# Control characters (C0 and DEL): Tornado's argument getters turn them into spaces and strip,
# so `itemsPerPage=%1C%02` would read as absent. No parameter of ours may hold one.
_CONTROL = frozenset(range(0x20)) | {0x7f}
MAX_DIGITS = 18


def check_query(arguments):
    """400 naming the parameter when a raw query value (or name) holds a control character;
    ``arguments`` is Tornado's request.query_arguments (str -> list of bytes)."""
    for name, values in arguments.items():
        for raw in [name.encode("utf-8", "replace")] + list(values):
            if not _CONTROL.isdisjoint(raw):
                raise bad_request("query parameter %r holds a control character"
                                  % name[:100])


def integer(name, raw, default=None, minimum=None):
    """``raw`` as an int (ASCII digits, an optional minus sign, at most 18 digits);
    ``default`` when absent or empty."""
    if raw is None or raw == "":
        return default
    digits = raw[1:] if raw[:1] == "-" else raw
    if not (digits.isascii() and digits.isdigit() and len(digits) <= MAX_DIGITS):
        raise bad_request("%s must be an integer, got %r" % (name, raw[:100]))
    value = int(raw)
    if minimum is not None and value < minimum:
        raise bad_request("%s must be at least %d, got %d" % (name, minimum, value))
    return value


def boolean(name, raw, default=False):
    """``raw`` as a bool from true/false, 1/0, yes/no; ``default`` when absent or empty."""
    if raw is None or raw == "":
        return default
    lowered = raw.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise bad_request("%s must be true or false, got %r" % (name, raw[:100]))
