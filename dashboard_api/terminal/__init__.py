"""Container shells in the browser: shell sessions, the SockJS endpoint, the exec stream.

``endpoint`` makes a cluster's sessions and the process's SockJS routes from the other modules.

The shell handler (handlers/shell.py) checks the caller's right and issues a sealed session id;
the browser opens SockJS at /api/sockjs on any replica and binds the id; the terminal then runs
a shell through the API server's exec WebSocket with the caller's token sealed in the id.
"""
