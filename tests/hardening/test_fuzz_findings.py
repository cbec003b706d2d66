"""What the fuzzer found, each pinned by a test of its own (the fuzzer would find them again,
but only with its seed and examples)."""

from tests.gateway.helpers import assert_error


def test_can_i_refuses_a_field_of_the_wrong_type(gateway, admin_token):
    """`{"verb": "get", "resource": "pods", "name": {}}` was answered for every name: a wider
    question than the one asked."""
    for field in ("namespace", "group", "subresource", "name"):
        reply = gateway.request("POST", "/api/v1/can-i", token=admin_token, csrf="can-i",
                                body={"verb": "get", "resource": "pods", field: {}})
        assert_error(reply, 400, "BadRequest", [field])
    # null stays "not given", as the document says.
    reply = gateway.request("POST", "/api/v1/can-i", token=admin_token, csrf="can-i",
                            body={"verb": "get", "resource": "pods", "name": None})
    assert reply.status == 200 and reply.json() == {"allowed": True}


def test_a_bad_reference_line_number_is_400_even_without_offsets(seeded_cluster, gateway,
                                                                  admin_token):
    """Found once the fuzzer's reads reached a real pod (issue 18):
    `referenceLineNum=null` was ignored (200) when no offsets were given."""
    from tests.cluster import workloads
    pods = gateway.get("/api/v1/pod/" + workloads.SHOP, token=admin_token).json()["pods"]
    pod = next(p["objectMeta"]["name"] for p in pods if p["status"] == "Running")
    path = "/api/v1/log/%s/%s" % (workloads.SHOP, pod)
    reply = gateway.get(path + "?referenceLineNum=null", token=admin_token)
    assert_error(reply, 400, "BadRequest", ["referenceLineNum"])
    assert gateway.get(path + "?referenceLineNum=3", token=admin_token).status == 200


def test_the_container_list_is_documented_as_names(seeded_cluster, gateway, admin_token):
    """Found once the fuzzer's reads reached a real pod (issue 18): the document said
    objects, the route answers names (as upstream: {"containers": ["app"]})."""
    from tests.cluster import workloads
    pods = gateway.get("/api/v1/pod/" + workloads.SHOP, token=admin_token).json()["pods"]
    name = pods[0]["objectMeta"]["name"]
    reply = gateway.get("/api/v1/pod/%s/%s/container" % (workloads.SHOP, name),
                        token=admin_token)
    assert reply.status == 200 and all(isinstance(c, str) for c in reply.json()["containers"])
    from dashboard_api.app import apimodels
    schema = apimodels.COMMON.get("Containers") or apimodels.RECORDS["Containers"]
    assert schema["properties"]["containers"]["items"] == {"type": "string"}
