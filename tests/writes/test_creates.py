"""POST /api/v1/namespace and POST /api/v1/secret (paths shared with their lists)."""

import base64
import json
import secrets

from tests.gateway.helpers import assert_error
from tests.writes.helpers import absent, bad, csrf_refused, forbidden, read, unauthorized


def test_create_namespace(cluster, gateway, admin_token):
    name = "made-" + secrets.token_hex(4)
    path = "/api/v1/namespaces/" + name
    csrf_refused(gateway.request("POST", "/api/v1/namespace", token=admin_token,
                                 body={"name": name}))
    unauthorized(gateway.request("POST", "/api/v1/namespace", body={"name": name},
                                 csrf="namespace"))
    forbidden(gateway.request("POST", "/api/v1/namespace", token=cluster.norights_token,
                              body={"name": name}, csrf="namespace"), "create", "namespaces")
    for body, says in (({"name": "Not_Valid"}, "invalid"), ({}, "name is required"),
                       ({"name": 7}, "name is required"), ([name], "JSON object")):
        bad(gateway.request("POST", "/api/v1/namespace", token=admin_token, body=body,
                            csrf="namespace"), says)
    bad(gateway.request("POST", "/api/v1/namespace", token=admin_token, raw_body=b"{",
                        headers={"Content-Type": "application/json"}, csrf="namespace"),
        "not valid JSON")
    assert absent(cluster, path)
    try:
        reply = gateway.request("POST", "/api/v1/namespace/", token=admin_token,
                                body={"name": name}, csrf="namespace")
        assert reply.status == 201 and reply.json() == {"name": name}, reply
        assert read(cluster, path)["status"]["phase"] == "Active"
        again = assert_error(gateway.request("POST", "/api/v1/namespace", token=admin_token,
                                             body={"name": name}, csrf="namespace"), 409,
                             "AlreadyExists")
        assert name in again["message"]
        # The audit entries (one JSON line each) name the route, the object and the status.
        from tests.gateway.helpers import audit_lines
        def entries():
            mine = [e for e in audit_lines(gateway) if e["route"] == "namespace-create"
                    and e["name"] == name and e["status"] in (201, 409)]
            return mine if [e["status"] for e in mine] == [201, 409] else None
        lines = cluster.wait_for(entries, timeout=10, what="the audit entries")
        assert all(e["kind"] == "namespace" and e["resource"] == "namespaces" for e in lines)
        assert lines[1]["reason"] == "AlreadyExists"
        # A static token names nobody.
        assert all((e["user"], e["userVerified"]) == ("unknown", False) for e in lines)
        # The list on the same path shows it at once (the write waited for the watch cache).
        # Filtered by name: other tests' namespaces may fill the first page of 10.
        reply = gateway.get("/api/v1/namespace", token=admin_token,
                            params={"filterBy": "name," + name})
        assert reply.status == 200
        assert name in [n["objectMeta"]["name"] for n in reply.json()["namespaces"]], reply
    finally:
        cluster.request("DELETE", path)


def test_create_image_pull_secret(cluster, gateway, namespace, admin_token):
    dockercfg = json.dumps({"registry.example.com": {"auth": "dXNlcjpwYXNz"}}).encode()
    body = {"name": "pull", "namespace": namespace,
            "data": base64.b64encode(dockercfg).decode()}
    path = "/api/v1/namespaces/%s/secrets/pull" % namespace
    csrf_refused(gateway.request("POST", "/api/v1/secret", token=admin_token, body=body))
    forbidden(gateway.request("POST", "/api/v1/secret", token=cluster.norights_token, body=body,
                              csrf="secret"), "create", "secrets")
    for change, says in (({"data": "%%% not base64"}, "base64"), ({"data": 5}, "data"),
                         ({"name": None}, "name is required"),
                         ({"namespace": "Bad NS"}, "invalid")):
        bad(gateway.request("POST", "/api/v1/secret", token=admin_token,
                            body=dict(body, **change), csrf="secret"), says)
    assert absent(cluster, path)
    # A .dockercfg that is not JSON: the API server's own validation (422).
    invalid = dict(body, data=base64.b64encode(b"not json").decode())
    assert_error(gateway.request("POST", "/api/v1/secret", token=admin_token, body=invalid,
                                 csrf="secret"), 422, "Invalid")
    assert absent(cluster, path)

    reply = gateway.request("POST", "/api/v1/secret/", token=admin_token, body=body,
                            csrf="secret")
    assert reply.status == 201, reply
    assert reply.json() == {"objectMeta": {"name": "pull", "namespace": namespace,
                                           "creationTimestamp": None},
                            "typeMeta": {"kind": "secret"}, "type": "kubernetes.io/dockercfg"}
    secret = read(cluster, path)
    assert secret["type"] == "kubernetes.io/dockercfg"
    assert base64.b64decode(secret["data"][".dockercfg"]) == dockercfg
    assert gateway.get("/api/v1/secret/" + namespace, token=admin_token).status == 200


def test_request_metrics_count_each_method_of_a_shared_path(cluster, gateway, namespace,
                                                            admin_token):
    from tests.gateway.helpers import metric_value

    def count(verb, code):
        text = gateway.get("/metrics").data.decode()
        return metric_value(text, "apiserver_request_count", verb=verb, resource="secret",
                            code=code)
    posts, gets = count("POST", 400), count("GET", 200)
    bad(gateway.request("POST", "/api/v1/secret", token=admin_token, body={},
                        csrf="secret"), "name")
    assert gateway.get("/api/v1/secret/" + namespace, token=admin_token).status == 200
    assert count("POST", 400) == posts + 1 and count("GET", 200) == gets + 1


def test_disable_csrf_lets_posts_through(cluster, admin_token):
    from tests.support.gateway import Gateway
    gw = Gateway.start(cluster, "--disable-csrf")
    name = "nocsrf-" + secrets.token_hex(4)
    try:
        reply = gw.request("POST", "/api/v1/namespace", token=admin_token, body={"name": name})
        assert reply.status == 201, reply
        assert read(cluster, "/api/v1/namespaces/" + name)["metadata"]["name"] == name
    finally:
        gw.stop()
        cluster.request("DELETE", "/api/v1/namespaces/" + name)
