"""Identity: the Bearer rule, 401 and 403 bodies, impersonation pass-through, sign-in, /me."""

import pytest

from tests.gateway.helpers import assert_error

UNAUTHORIZED = {"status": "Failure", "message": "Unauthorized", "reason": "Unauthorized",
                "code": 401}


def test_no_authorization_header_is_401(gateway):
    reply = gateway.get("/api/v1/me")
    assert reply.status == 401 and reply.json() == UNAUTHORIZED
    assert reply.headers["Content-Type"].startswith("application/json")


@pytest.mark.parametrize("template", [
    "Bearer ", "Bearer", "Bearer    ", "bearer {token}", "BEARER {token}", "Basic {token}",
    "{token}", "Token {token}", "Bearer: {token}",
])
def test_headers_breaking_the_bearer_rule_are_401(gateway, cluster, template):
    header = template.format(token=cluster.admin_token)
    reply = gateway.get("/api/v1/me", headers={"Authorization": header})
    assert reply.status == 401 and reply.json() == UNAUTHORIZED


def test_the_same_token_under_the_right_prefix_is_accepted(gateway, admin_token):
    reply = gateway.get("/api/v1/me", token=admin_token)
    assert reply.status == 200 and reply.json() == {"authenticated": True}


def test_a_wrong_token_is_401(gateway):
    assert gateway.get("/api/v1/me", token="not-a-token").json() == UNAUTHORIZED
    reply = gateway.request("POST", "/api/v1/can-i", token="not-a-token", csrf="can-i",
                            body={"verb": "get", "resource": "pods"})
    assert reply.status == 401 and reply.json() == UNAUTHORIZED


def test_a_token_without_rights_is_403_naming_user_verb_resource_and_namespace(
        gateway, norights_token):
    reply = gateway.request("PUT", "/api/v1/settings/global", token=norights_token,
                            body={"itemsPerPage": 25})
    body = assert_error(reply, 403, "Forbidden")
    for part in ('User "nobody"', "cannot create", 'resource "configmaps"',
                 'namespace "kubernetes-dashboard"'):
        assert part in body["message"], body


def test_impersonation_headers_are_passed_through(gateway, admin_token):
    me = gateway.get("/api/v1/me", token=admin_token, headers={"Impersonate-User": "nobody"})
    assert me.status == 200 and me.json() == {"name": "nobody", "authenticated": True}
    reply = gateway.request("PUT", "/api/v1/settings/global", token=admin_token,
                            headers={"Impersonate-User": "nobody"}, body={"itemsPerPage": 25})
    assert_error(reply, 403, "Forbidden", ['User "nobody"'])
    # Impersonating a group with the rights gives them back.
    review = gateway.request("POST", "/api/v1/can-i", token=admin_token, csrf="can-i",
                             headers={"Impersonate-User": "nobody",
                                      "Impersonate-Group": "system:masters"},
                             body={"verb": "delete", "resource": "nodes"})
    assert review.status == 200 and review.json() == {"allowed": True}
    denied = gateway.request("POST", "/api/v1/can-i", token=admin_token, csrf="can-i",
                             headers={"Impersonate-User": "nobody"},
                             body={"verb": "delete", "resource": "nodes"})
    assert denied.json() == {"allowed": False}


def test_impersonation_needs_the_right_to_impersonate(gateway, norights_token):
    reply = gateway.get("/api/v1/me", token=norights_token,
                        headers={"Impersonate-User": "admin"})
    assert_error(reply, 403, "Forbidden", ['User "nobody" cannot impersonate'])


def test_me_names_service_accounts(gateway, cluster, namespace):
    token = cluster.service_account_token(namespace, "default")
    reply = gateway.get("/api/v1/me", token=token)
    assert reply.status == 200 and reply.json() == {"name": "default", "authenticated": True}


def login(gateway, body, **kw):
    return gateway.request("POST", "/api/v1/login", body=body, csrf="login", **kw)


def test_login_with_a_token(gateway, admin_token, norights_token):
    reply = login(gateway, {"token": admin_token})
    assert reply.status == 200 and reply.json() == {"token": admin_token}
    # Signing in only proves the token is valid; rights are checked per request.
    assert login(gateway, {"token": norights_token}).json() == {"token": norights_token}


def test_login_with_kubeconfig_content(gateway, cluster):
    with open(cluster.kubeconfig) as f:
        content = f.read()
    reply = login(gateway, {"kubeConfig": content})
    assert reply.status == 200 and reply.json() == {"token": cluster.admin_token}
    broken = content.replace(cluster.admin_token, "wrong-token")
    assert login(gateway, {"kubeConfig": broken}).json() == UNAUTHORIZED


def test_login_with_a_wrongly_typed_kubeconfig_is_400(gateway):
    # One row end to end; every wrong type is in tests/unit/auth/test_identity.py.
    reply = login(gateway, {"kubeConfig": "contexts: [{name: x, context: 5}]\ncurrent-context: x"})
    assert_error(reply, 400, "BadRequest", ["context 'x' must be a mapping"])


def test_login_refusals(gateway):
    assert login(gateway, {"token": "wrong"}).json() == UNAUTHORIZED
    assert login(gateway, {}).json() == UNAUTHORIZED
    assert login(gateway, {"token": "  ", "username": "a", "password": "b"}).json() == \
        UNAUTHORIZED
    assert login(gateway, {"token": "tab\tinside"}).json() == UNAUTHORIZED
    assert_error(login(gateway, {"kubeConfig": "users: [unclosed"}), 400, "BadRequest",
                 ["not valid YAML"])
    no_token = "current-context: c\ncontexts: [{name: c, context: {user: u}}]\n" \
               "users: [{name: u, user: {client-certificate: /etc/x}}]\n"
    assert_error(login(gateway, {"kubeConfig": no_token}), 400, "BadRequest", ["no token"])
    assert_error(login(gateway, ["token"]), 400, "BadRequest")
    malformed = gateway.request("POST", "/api/v1/login", raw_body=b"{", csrf="login",
                                headers={"Content-Type": "application/json"})
    assert_error(malformed, 400, "BadRequest")
    wrong_type = gateway.request("POST", "/api/v1/login", raw_body=b"token=x", csrf="login",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert_error(wrong_type, 415)


def test_login_needs_a_csrf_token_for_login(gateway, admin_token):
    missing = gateway.request("POST", "/api/v1/login", body={"token": admin_token})
    assert assert_error(missing, 401)["details"]["causes"][0]["reason"] == "Missing"
    other = gateway.request("POST", "/api/v1/login", body={"token": admin_token},
                            csrf="namespace")
    assert assert_error(other, 401)["details"]["causes"][0]["reason"] == "Invalid"
