"""Names from the URL stay names: encoded slashes, dots and queries never reach another resource."""

import time

import pytest

from tests.resources import kube


@pytest.fixture
def secret_in_team_a(cluster):
    name = "s-paths-%d" % time.monotonic_ns()
    kube.create(cluster, "/api/v1/namespaces/team-a/secrets",
                {"metadata": {"name": name}, "stringData": {"password": "hunter2"}})
    yield name
    cluster.request("DELETE", "/api/v1/namespaces/team-a/secrets/" + name)


def test_encoded_slashes_do_not_reach_another_resource(gateway, editor_token, secret_in_team_a):
    # Decoded, this name would walk from configmaps to the secret.
    reply = gateway.get("/api/v1/configmap/team-a/x%2F..%2F..%2Fsecrets%2F" + secret_in_team_a,
                        editor_token)
    assert reply.status == 400, reply
    assert reply.json()["reason"] == "BadRequest"
    assert b"hunter2" not in reply.data and b"aHVudGVyMg" not in reply.data


def test_encoded_query_in_a_namespace_is_not_a_query(gateway, editor_token):
    started = time.monotonic()
    reply = gateway.get("/api/v1/configmap/team-a%2Fconfigmaps%3Fwatch%3D1%26timeoutSeconds%3D30"
                        "%26x%3D", editor_token)
    # A watch would hold the request open for 30 s; such a namespace name is refused at once.
    assert time.monotonic() - started < 10
    assert reply.status == 400, reply


@pytest.mark.parametrize("name", ["..", "."])
def test_dot_names_are_bad_requests(gateway, admin_token, name):
    reply = gateway.get("/api/v1/configmap/team-a/%s" % name.replace(".", "%2E"), admin_token)
    assert reply.status == 400, reply
    assert reply.json()["reason"] == "BadRequest"
