"""POST /api/v1/can-i: a SelfSubjectAccessReview with the caller's own token."""

import pytest


def can_i(gateway, token, body, csrf="can-i", **kw):
    return gateway.request("POST", "/api/v1/can-i", token=token, body=body, csrf=csrf, **kw)


@pytest.mark.parametrize("user,verb,resource,namespace,allowed", [
    ("admin", "delete", "nodes", "", True),
    ("editor", "create", "pods", "team-a", True),
    ("editor", "create", "pods", "kube-system", False),
    ("editor", "list", "nodes", "", False),
    ("norights", "get", "pods", "team-a", False),
])
def test_can_i_answers_for_the_caller(gateway, cluster, user, verb, resource, namespace,
                                      allowed):
    token = getattr(cluster, user + "_token")
    reply = can_i(gateway, token, {"verb": verb, "resource": resource, "namespace": namespace})
    assert reply.status == 200, reply
    assert reply.json() == {"allowed": allowed}


def test_can_i_with_group_and_subresource(gateway, editor_token, admin_token):
    body = {"verb": "create", "resource": "pods", "subresource": "exec", "namespace": "team-a"}
    assert can_i(gateway, editor_token, body).json() == {"allowed": True}
    body = {"verb": "list", "resource": "deployments", "group": "apps", "namespace": "team-a"}
    assert can_i(gateway, editor_token, body).json() == {"allowed": True}
    body["namespace"] = "default"
    assert can_i(gateway, editor_token, body).json() == {"allowed": False}


@pytest.mark.parametrize("body", [
    {"resource": "pods"}, {"verb": "get"}, {"verb": "", "resource": "pods"},
    {"verb": 3, "resource": "pods"}, ["get", "pods"], "get pods",
])
def test_can_i_bad_bodies_are_400(gateway, admin_token, body):
    reply = can_i(gateway, admin_token, body)
    assert reply.status == 400, reply
    assert reply.json()["reason"] == "BadRequest"


def test_can_i_needs_json_a_token_and_csrf(gateway, admin_token):
    reply = can_i(gateway, admin_token, None, raw_body=b"verb=get",
                  headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert reply.status == 415
    reply = can_i(gateway, admin_token, None, raw_body=b"{not json",
                  headers={"Content-Type": "application/json"})
    assert reply.status == 400
    assert can_i(gateway, None, {"verb": "get", "resource": "pods"}).status == 401
    reply = can_i(gateway, admin_token, {"verb": "get", "resource": "pods"}, csrf=None)
    assert (reply.status, reply.json()["message"]) == (401, "MSG_CSRF_VALIDATION_ERROR")
    wrong = gateway.csrf_token("pod")  # a token for another action
    reply = can_i(gateway, admin_token, {"verb": "get", "resource": "pods"}, csrf=None,
                  headers={"X-CSRF-TOKEN": wrong})
    assert (reply.status, reply.json()["message"]) == (401, "MSG_CSRF_VALIDATION_ERROR")
