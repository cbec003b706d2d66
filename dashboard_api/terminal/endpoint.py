"""A cluster's terminal sessions and the process's SockJS endpoint, made from their parts."""

from dashboard_api.serving.sealing import Sealer
from dashboard_api.terminal import connection, transport
from dashboard_api.terminal.sessions import BindRefused, Sessions
from dashboard_api.terminal.terminal import Terminal


def sockjs_urls(sessions=None, max_connections=None, proxies=None, secret=None):
    """The URL specs of /api/sockjs for the Tornado application (call it on the event loop),
    binding the ids of `sessions` (a sessions.Sessions, or a function of a connection's path
    giving the Sessions of its cluster, None where there is none); at most `max_connections`
    SockJS connections open at once (default: see connection.py); `proxies`
    (proxies.TrustedProxies) tells which client a connection comes from, for the per-client
    budget of unbound connections; `secret` signs the session owners' cookies."""
    return transport.url_specs(transport.router(
        connection.connection_class(sessions, max_connections, proxies),
        secret if secret is not None else getattr(sessions, "secret", None)))


def make_sessions(cluster, secret, name="", impersonate=False, on_event=None):
    """The terminal sessions of cluster `name`: ids sealed under a key derived from `secret`
    (the CSRF key every replica shares) for that cluster only, terminals run with the token
    sealed in the id; with `impersonate` (the cluster's identity mode), a ticket the gateway
    sealed for a person it verified runs with the gateway's credentials naming that person.
    Such a ticket is never honoured by a cluster in another mode: it is refused there.
    `on_event`: told when a terminal starts a shell and when it ends (sessions.Sessions)."""
    def make_terminal(ticket):
        if ticket.via_gateway:
            if not impersonate:
                raise BindRefused("this cluster no longer impersonates people: open the "
                                  "terminal again")
            handle = cluster.impersonating(ticket.impersonation, ticket.token)
        else:
            handle = cluster.handle(ticket.token, ticket.impersonation)
        return Terminal(handle, ticket.namespace, ticket.pod, ticket.container, ticket.shell)

    sessions = Sessions(Sealer(secret, name), make_terminal, on_event=on_event)
    sessions.secret = secret  # the SockJS session owners' cookies are signed with it too
    return sessions
