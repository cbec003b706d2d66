"""A request refused before it could act spends no CSRF token."""

CAN_I = {"verb": "list", "resource": "pods", "namespace": "default"}


def test_an_anonymous_post_spends_no_csrf_token(gateway, admin_token):
    token = gateway.csrf_token("can-i")
    headers = {"X-CSRF-TOKEN": token}
    anonymous = gateway.request("POST", "/api/v1/can-i", body=CAN_I, headers=headers)
    assert anonymous.status == 401, anonymous
    signed_in = gateway.request("POST", "/api/v1/can-i", token=admin_token, body=CAN_I,
                                headers=headers)
    assert signed_in.status == 200, signed_in
    assert signed_in.json() == {"allowed": True}
    # ... and the token is one-time all the same.
    again = gateway.request("POST", "/api/v1/can-i", token=admin_token, body=CAN_I,
                            headers=headers)
    assert again.status == 401, again
