"""Each Impersonate-Group and Impersonate-Extra-* line reaches the API server as a line of its
own: joined into one value, the API server would read one group named "a,b"."""

import pytest
from urllib3._collections import HTTPHeaderDict

GROUP = "hardening-readers"


@pytest.fixture
def group_may_list_config_maps(cluster, namespace):
    """A RoleBinding that lets GROUP alone (and nobody else) read config maps in `namespace`."""
    status, body = cluster.request(
        "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % namespace, {
            "metadata": {"name": "group-view"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "view"},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                          "name": GROUP}]})
    assert status == 201, body
    return namespace


def call(gateway, token, path, lines):
    headers = HTTPHeaderDict({"Authorization": "Bearer " + token})
    for name, value in lines:
        headers.add(name, value)
    return gateway.http.request("GET", gateway.url + path, headers=headers)


def test_each_group_line_is_its_own_group(gateway, admin_token, group_may_list_config_maps):
    path = "/api/v1/configmap/" + group_may_list_config_maps
    user = [("Impersonate-User", "nobody")]
    assert call(gateway, admin_token, path, user).status == 403
    # The granting group second, after one that grants nothing: joined, neither would count.
    both = user + [("Impersonate-Group", "system:authenticated"),
                   ("Impersonate-Group", GROUP)]
    reply = call(gateway, admin_token, path, both)
    assert reply.status == 200, reply.data
    # The API server sees both groups (a self review through the gateway says what it sees).
    assert call(gateway, admin_token, path,
                user + [("Impersonate-Group", "system:authenticated,%s" % GROUP)]).status == 403


def test_the_authorization_cache_keeps_identities_apart(gateway, admin_token,
                                                        group_may_list_config_maps):
    """The watch cache's answers are kept per identity: the same token with one group less
    must not reuse the answer of the one with the granting group."""
    path = "/api/v1/configmap/" + group_may_list_config_maps
    user = [("Impersonate-User", "nobody")]
    granted = call(gateway, admin_token, path,
                   user + [("Impersonate-Group", "x"), ("Impersonate-Group", GROUP)])
    assert granted.status == 200, granted.data
    assert call(gateway, admin_token, path, user + [("Impersonate-Group", "x")]).status == 403
    # Order does not make another identity.
    assert call(gateway, admin_token, path,
                user + [("Impersonate-Group", GROUP), ("Impersonate-Group", "x")]).status == 200


@pytest.fixture
def impersonator(cluster, namespace):
    """A service account that may impersonate user "nobody" with the extra `scopes` values
    "a" and "b" only: the API server checks each extra value on its own."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    name = "impersonator-" + namespace
    status, body = cluster.request("POST", rbac + "/clusterroles", {
        "metadata": {"name": name},
        "rules": [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"],
                   "resourceNames": ["nobody"]},
                  {"apiGroups": ["authentication.k8s.io"], "resources": ["userextras/scopes"],
                   "verbs": ["impersonate"], "resourceNames": ["a", "b"]}]})
    assert status == 201, body
    status, body = cluster.request("POST", rbac + "/clusterrolebindings", {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}]})
    assert status == 201, body
    yield cluster.service_account_token(namespace, "default")
    cluster.request("DELETE", rbac + "/clusterrolebindings/" + name)
    cluster.request("DELETE", rbac + "/clusterroles/" + name)


def test_extra_lines_are_forwarded_one_by_one(cluster, gateway, impersonator):
    def me(extras):
        return call(gateway, impersonator, "/api/v1/me", [("Impersonate-User", "nobody")] +
                    [("Impersonate-Extra-Scopes", v) for v in extras])

    def answered(extras):
        reply = me(extras)
        return reply if reply.status != 403 else None

    # RBAC takes a moment to see the new binding.
    reply = cluster.wait_for(lambda: answered(["a"]), what="the impersonation right")
    assert reply.status == 200, reply.data
    both = me(["a", "b"])
    assert both.status == 200, both.data
    assert me(["a", "c"]).status == 403   # each value is checked on its own
    assert me(["a,b"]).status == 403      # one line "a,b" is one value, not allowed
