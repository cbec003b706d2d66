"""Container shells in the browser: shell sessions, the SockJS endpoint, the exec stream.

The shell handler (handlers/shell.py) checks the caller's right and issues a session id;
the browser opens SockJS at /api/sockjs and binds the id; the terminal then runs a shell
through the API server's exec WebSocket.
"""


def sockjs_urls(max_connections=None):
    """The URL specs of /api/sockjs for the Tornado application (call it on the event loop);
    at most `max_connections` SockJS connections open at once (default: see connection.py)."""
    from dashboard_api.terminal import connection, transport
    return transport.url_specs(transport.router(connection.connection_class(max_connections)))
