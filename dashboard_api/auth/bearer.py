"""The Bearer rule of the specification."""

PREFIX = "Bearer "


def bearer_token(header):
    """The token of an ``Authorization: Bearer <token>`` header, or None.

    Accepted only when the header starts with exactly ``Bearer `` and the rest is not empty.
    """
    if not header or not header.startswith(PREFIX):
        return None
    token = header[len(PREFIX):].strip()
    return token or None
