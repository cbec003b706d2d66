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
