"""GET /api/v1/pod/{namespace}/{pod}/shell/{container} (and /api/v1/exec/...): a terminal session.

The caller must be allowed to create ``pods/exec``, checked with their own token before any
session exists; the pod and the container must exist. The answer is ``{id}``, sealed (any
replica sharing the secret binds it), to be bound over SockJS within 10 seconds. A caller at
their session limit gets 429 (terminal/sessions.py).
"""

import re

from dashboard_api.serving.errors import ApiError, bad_request, from_apiserver, not_found
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving.routes import Route
from dashboard_api.terminal.execstream import pod_path
from dashboard_api.terminal.sessions import caller_key

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def check_names(namespace, pod, container):
    if not _LABEL.match(namespace):
        raise bad_request("invalid namespace name %r" % namespace)
    if len(pod) > 253 or not _SUBDOMAIN.match(pod):
        raise bad_request("invalid pod name %r" % pod)
    if not _LABEL.match(container):
        raise bad_request("invalid container name %r" % container)


async def require_exec(handle, namespace, pod):
    """403 unless the caller may create pods/exec on the pod, with the API server's message."""
    if await handle.can_i(namespace=namespace, verb="create", resource="pods",
                          subresource="exec", name=pod):
        return
    # The review does not say who the caller is. The API server's own refusal does, and it
    # comes before anything else: an exec POST without an upgrade never reaches a container.
    refusal = await handle.call("POST", pod_path(namespace, pod, "exec"))
    if refusal.status == 403:
        raise from_apiserver(403, refusal.data)
    raise ApiError(403, 'cannot create resource "pods/exec" in API group "" in the namespace '
                        '"%s"' % namespace, "Forbidden")


def container_names(pod):
    spec = pod.get("spec") or {}
    return [c.get("name") for key in ("containers", "initContainers", "ephemeralContainers")
            for c in spec.get(key) or ()]


class ShellHandler(BaseHandler):
    async def get(self, namespace, pod, container):
        handle = self.caller()
        sessions = self.cluster.terminals
        check_names(namespace, pod, container)
        sessions.check(caller_key(self.token()))  # early, to spare the API server
        # An absent or unknown shell is not an error: then every shell is tried in turn.
        shell = self.get_query_argument("shell", None)
        await require_exec(handle, namespace, pod)
        obj = await handle.get(pod_path(namespace, pod))
        if container not in container_names(obj):
            raise not_found('container "%s" not found in pod "%s"' % (container, pod))
        session_id = sessions.issue(namespace, pod, container, shell, self.token(),
                                    handle.impersonation, via_gateway=handle.service)
        self.write_json({"id": session_id})


ROUTES = [
    Route("/api/v1/pod/{namespace}/{pod}/shell/{container}", ShellHandler, "pod-shell",
          summary="Starts a terminal session in a container; bind its id over SockJS"),
    Route("/api/v1/exec/{namespace}/{pod}/{container}", ShellHandler, "exec",
          summary="Starts a terminal session in a container (alternative path)"),
]
