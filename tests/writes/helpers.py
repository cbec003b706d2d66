"""Checks shared by the write tests: errors, CSRF refusals, reading the cluster back."""

from tests.gateway.helpers import assert_error


def forbidden(reply, verb, resource):
    """A 403 with the API server's message about the no-rights user."""
    body = assert_error(reply, 403, "Forbidden")
    assert 'User "nobody" cannot %s resource "%s"' % (verb, resource) in body["message"], body
    return body


def bad(reply, *message_has):
    return assert_error(reply, 400, "BadRequest", message_has)


def csrf_refused(reply):
    return assert_error(reply, 401, "Unauthorized", ["MSG_CSRF_VALIDATION_ERROR"])


def unauthorized(reply):
    return assert_error(reply, 401, "Unauthorized")


def read(cluster, path):
    """The object at ``path`` as the API server has it (admin), asserting it exists."""
    status, obj = cluster.request("GET", path)
    assert status == 200, (path, status, obj)
    return obj


def absent(cluster, path):
    status, _ = cluster.request("GET", path)
    return status == 404


def deleted_in_foreground(cluster, path):
    """Gone, or being deleted in the foreground: the API server has taken the DELETE and marked
    the object, and the garbage collector removes it once it watches its resource (for a CRD
    made moments ago, up to its next discovery resync, 30 s on a 1.20 controller manager)."""
    status, obj = cluster.request("GET", path)
    if status == 404:
        return True
    meta = (obj or {}).get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and \
        "foregroundDeletion" in (meta.get("finalizers") or ())


def version(cluster, path):
    return read(cluster, path)["metadata"]["resourceVersion"]


def generation(cluster, path):
    """The object's spec generation: unlike resourceVersion, controllers' status updates
    leave it alone, so it shows whether anyone changed the spec."""
    return read(cluster, path)["metadata"]["generation"]
