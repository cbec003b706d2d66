"""Checks shared by the resource tests."""


def forbidden(gateway, path, token, verb, resource):
    """A 403 carrying the API server's message about the no-rights user."""
    reply = gateway.get(path, token=token)
    assert reply.status == 403, (path, reply)
    body = reply.json()
    assert body["reason"] == "Forbidden" and body["code"] == 403, body
    assert 'User "nobody" cannot %s resource "%s"' % (verb, resource) in body["message"], body


def confined(gateway, kind, editor_token, namespace):
    """The editor may read ``kind`` in team-a only: team-a plus another namespace is a 403;
    all namespaces is the list over the namespaces where they may list it (team-a only)."""
    reply = gateway.get("/api/v1/%s/team-a,%s" % (kind, namespace), token=editor_token)
    assert reply.status == 403, (kind, reply)
    assert 'User "editor" cannot list resource' in reply.json()["message"]
    ok = gateway.get("/api/v1/%s/team-a" % kind, token=editor_token)
    assert ok.status == 200, (kind, ok)
    assert ok.json()["errors"] == []
    for segment in ("", "/%20"):
        every = gateway.get("/api/v1/" + kind + segment, token=editor_token)
        assert every.status == 200, (kind, segment, every)
        assert every.json()["items"] == ok.json()["items"], (kind, segment)
        assert {i["objectMeta"]["namespace"] for i in every.json()["items"]} <= {"team-a"}


def usable_only(gateway, path, token, namespaces=("team-a",)):
    """"All namespaces" for a caller who may not list cluster-wide: 200, and only objects of
    the namespaces where they may list (the same items as their own list of those)."""
    reply = gateway.get(path, token=token)
    assert reply.status == 200, (path, reply)
    body = reply.json()
    assert {i["objectMeta"]["namespace"] for i in body["items"]} <= set(namespaces), body
    base = path[:-len("/%20")] if path.endswith("/%20") else path
    own = get(gateway, base + "/" + ",".join(namespaces), token)
    assert body["items"] == own["items"] and body["listMeta"] == own["listMeta"], (body, own)
    return body


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
