"""Parsing of query parameter values (pure; a bad value is a 400 naming the parameter)."""

from dashboard_api.errors import bad_request


def integer(name, raw, default=None, minimum=None):
    """``raw`` as an int; ``default`` when absent or empty."""
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise bad_request("%s must be an integer, got %r" % (name, raw))
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
    raise bad_request("%s must be true or false, got %r" % (name, raw))
