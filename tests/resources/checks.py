"""Checks shared by the resource tests."""

import pytest


def forbidden(gateway, path, token, verb, resource):
    """A 403 carrying the API server's message about the no-rights user."""
    reply = gateway.get(path, token=token)
    assert reply.status == 403, (path, reply)
    body = reply.json()
    assert body["reason"] == "Forbidden" and body["code"] == 403, body
    assert 'User "nobody" cannot %s resource "%s"' % (verb, resource) in body["message"], body


def confined(gateway, kind, editor_token, namespace):
    """The editor may read ``kind`` in team-a only: all namespaces, or team-a plus another
    namespace, is a 403."""
    for segment in ("", "/%20", "/team-a," + namespace):
        reply = gateway.get("/api/v1/" + kind + segment, token=editor_token)
        assert reply.status == 403, (kind, segment, reply)
        assert 'User "editor" cannot list resource' in reply.json()["message"]
    ok = gateway.get("/api/v1/%s/team-a" % kind, token=editor_token)
    assert ok.status == 200, (kind, ok)
    assert ok.json()["errors"] == []


def missing(gateway, path, token, what):
    """A 404 whose message names the missing object, e.g. ``services "nope" not found``."""
    reply = gateway.get(path, token=token)
    assert reply.status == 404, (path, reply)
    assert reply.json()["reason"] == "NotFound"
    assert what in reply.json()["message"], (path, reply.json())


def get(gateway, path, token, **params):
    """The JSON body of a GET that must answer 200."""
    reply = gateway.get(path, token=token, params=params or None)
    assert reply.status == 200, (path, reply)
    return reply.json()


@pytest.fixture
def cluster_objects(cluster):
    """Collects REST paths of cluster-scoped objects a test creates; deletes them afterwards."""
    paths = []
    yield paths
    for path in reversed(paths):
        cluster.request("DELETE", path)
