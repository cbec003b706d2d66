"""CSRF: POSTs need a one-time, expiring token bound to their action; refusals change nothing.

The state-changing POST used is /api/v1/can-i, whose handler creates a SelfSubjectAccessReview
on the API server: the API server's own request counter shows whether the handler ran at all.
"""

import base64
import os
import time

from tests.gateway.helpers import apiserver_count, assert_error, full_log

SSAR = "selfsubjectaccessreviews"
BODY = {"verb": "get", "resource": "pods", "namespace": "default"}


def can_i(gw, token, csrf_header=None):
    headers = {} if csrf_header is None else {"X-CSRF-TOKEN": csrf_header}
    return gw.request("POST", "/api/v1/can-i", token=token, body=BODY, headers=headers)


def refused(reply, reason):
    body = assert_error(reply, 401, "Unauthorized", ["MSG_CSRF_VALIDATION_ERROR"])
    assert body["details"]["causes"][0]["reason"] == reason, body


def test_token_issue_shape(gateway):
    reply = gateway.get("/api/v1/csrftoken/can-i")
    assert reply.status == 200 and list(reply.json()) == ["token"]
    body, _, stamp = reply.json()["token"].rpartition(":")
    assert body and abs(int(stamp) - time.time() * 1000) < 60_000


def test_missing_wrong_action_reused_and_malformed_tokens_change_nothing(
        gateway, cluster, admin_token):
    before = apiserver_count(cluster, SSAR)
    refused(can_i(gateway, admin_token), "Missing")
    refused(can_i(gateway, admin_token, ""), "Missing")
    refused(can_i(gateway, admin_token, gateway.csrf_token("namespace")), "Invalid")
    refused(can_i(gateway, admin_token, "garbage"), "Malformed")
    good = gateway.csrf_token("can-i")
    body, _, stamp = good.rpartition(":")
    refused(can_i(gateway, admin_token, "%s:%d" % (body, int(stamp) + 1)), "Invalid")
    assert apiserver_count(cluster, SSAR) == before  # no handler ran

    assert can_i(gateway, admin_token, good).json() == {"allowed": True}
    assert apiserver_count(cluster, SSAR) == before + 1  # the counter does see a real POST
    refused(can_i(gateway, admin_token, good), "Reused")
    assert apiserver_count(cluster, SSAR) == before + 1


def test_expired_tokens_change_nothing(start_gateway, cluster, admin_token):
    gw = start_gateway("--csrf-token-ttl", "1s")
    token = gw.csrf_token("can-i")
    time.sleep(1.2)
    before = apiserver_count(cluster, SSAR)
    refused(can_i(gw, admin_token, token), "Expired")
    assert apiserver_count(cluster, SSAR) == before
    assert can_i(gw, admin_token, gw.csrf_token("can-i")).status == 200


def test_only_posts_are_checked(gateway, norights_token):
    # A PUT without a CSRF token reaches its handler: the API server's 403, not a CSRF 401.
    reply = gateway.request("PUT", "/api/v1/settings/global", token=norights_token,
                            body={"itemsPerPage": 25})
    assert_error(reply, 403, "Forbidden")


def test_replicas_sharing_the_key_accept_each_others_tokens(start_gateway, tmp_path,
                                                            admin_token):
    key_file = tmp_path / "csrf.key"
    key_file.write_text(base64.b64encode(os.urandom(256)).decode())
    one = start_gateway("--csrf-key-file", str(key_file))
    two = start_gateway(env={"CSRF_KEY": key_file.read_text()})
    other = start_gateway("--csrf-key", base64.b64encode(os.urandom(64)).decode())
    assert can_i(two, admin_token, one.csrf_token("can-i")).status == 200
    assert can_i(one, admin_token, two.csrf_token("can-i")).status == 200
    refused(can_i(other, admin_token, one.csrf_token("can-i")), "Invalid")


def test_disable_csrf(start_gateway, admin_token):
    gw = start_gateway("--disable-csrf")
    assert can_i(gw, admin_token).json() == {"allowed": True}
    # Tokens are still handed out (upstream crashed here), and are simply not needed.
    assert gw.get("/api/v1/csrftoken/login").status == 200


def test_csrf_key_flag_works_but_warns_that_ps_shows_it(start_gateway, tmp_path, admin_token):
    key = base64.b64encode(os.urandom(64)).decode()
    flagged = start_gateway("--csrf-key", key)
    assert can_i(flagged, admin_token, flagged.csrf_token("can-i")).status == 200
    log = full_log(flagged)
    assert "--csrf-key puts the CSRF key on the command line" in log
    assert "prefer --csrf-key-file or $CSRF_KEY" in log and key not in log
    key_file = tmp_path / "csrf.key"
    key_file.write_text(key)
    for quiet in (start_gateway("--csrf-key-file", str(key_file)),
                  start_gateway(env={"CSRF_KEY": key})):
        assert can_i(quiet, admin_token, flagged.csrf_token("can-i")).status == 200
        assert "on the command line" not in full_log(quiet)
