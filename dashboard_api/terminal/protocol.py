"""The terminal frames carried inside SockJS messages, and the shell selection rule.

Pure functions: no I/O, no Tornado. Client frames are JSON objects whose keys are matched
case-insensitively (``Op``, ``Data``, ``SessionID``, ``Rows``, ``Cols``); server frames always
carry all five keys, as the upstream web UI expects. The server ``toast`` frame (which upstream
defines but never sends) tells the browser that the gateway is going away.
"""

import ujson

SHELLS = ("bash", "sh", "powershell", "cmd")

BIND, STDIN, RESIZE, STDOUT, TOAST = "bind", "stdin", "resize", "stdout", "toast"

_UINT16 = 0xFFFF


class Frame:
    """One decoded client frame. ``op`` is lower-case; unused fields keep their defaults."""

    __slots__ = ("op", "data", "session_id", "rows", "cols")

    def __init__(self, op, data="", session_id="", rows=0, cols=0):
        self.op = op
        self.data = data
        self.session_id = session_id
        self.rows = rows
        self.cols = cols


def decode(message):
    """A client frame from SockJS message text; None when it is not a well-formed frame."""
    try:
        raw = ujson.loads(message)
    except (ValueError, TypeError):
        return None
    if not isinstance(raw, dict):
        return None
    fields = {str(k).lower(): v for k, v in raw.items()}
    op = fields.get("op")
    if not isinstance(op, str):
        return None
    data = fields.get("data", "")
    session_id = fields.get("sessionid", "")
    rows, cols = fields.get("rows", 0), fields.get("cols", 0)
    if not isinstance(data, str) or not isinstance(session_id, str):
        return None
    if not _uint16(rows) or not _uint16(cols):
        return None
    return Frame(op.lower(), data, session_id, rows, cols)


def _uint16(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _UINT16


def encode(op, data):
    """A server frame as JSON text."""
    return ujson.dumps({"Op": op, "Data": data, "SessionID": "", "Rows": 0, "Cols": 0},
                       ensure_ascii=False, escape_forward_slashes=False)


def candidates(shell):
    """The shells to try in order: the one asked for when it is valid, else all of them."""
    return (shell,) if shell in SHELLS else SHELLS
