"""Attack (on the log): secrets saved through the gateway while debug logging is on, and a
forged identity in the audit line.

Before: `PUT /api/v1/_raw/secret/...` at debug level put the secret's value in the log (inside
the last-applied-configuration annotation, which the redaction of `data` missed), and the
audit line named whoever a refused request's unsigned JWT claimed to be.
"""

import base64
import json
import secrets

from tests.support.gateway import Gateway
from tests.support.probe import Probe


def forged_jwt(subject):
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return "%s.%s.%s" % (part({"alg": "RS256"}), part({"sub": subject}), "c2ln")


def test_no_secret_reaches_the_debug_log(cluster, admin_token, namespace):
    value = "hunter2-" + secrets.token_hex(8)
    encoded = base64.b64encode(value.encode()).decode()
    gw = Gateway.start(cluster, "--watch-cache=false", "-v", "debug")
    try:
        with Probe(gw, admin_token) as probe:
            secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                      "metadata": {"name": "s", "namespace": namespace, "annotations": {
                          "kubectl.kubernetes.io/last-applied-configuration": json.dumps(
                              {"stringData": {"password": value}})}},
                      "stringData": {"password": value}}
            raw = "/api/v1/_raw/secret/namespace/%s/name/s" % namespace
            reply = gw.request("PUT", raw, token=admin_token, body=secret)
            assert reply.status in (200, 201, 204), reply
            assert gw.get(raw, token=admin_token).status == 200  # read back (body not logged)
            pull = {"name": "pull", "namespace": namespace, "data": base64.b64encode(
                json.dumps({"r.example": {"auth": encoded}}).encode()).decode()}
            reply = gw.request("POST", "/api/v1/secret", token=admin_token, body=pull,
                               csrf="secret")
            assert reply.status in (200, 201), reply
            content = "apiVersion: v1\nkind: Secret\nmetadata: {name: f}\nstringData:\n" \
                      "  password: %s\n" % value
            reply = gw.request("POST", "/api/v1/appdeploymentfromfile", token=admin_token,
                               csrf="appdeploymentfromfile",
                               body={"name": "f", "namespace": namespace, "content": content})
            assert reply.status in (200, 201), reply
            # A refused write with a forged service-account token.
            forged = forged_jwt("system:serviceaccount:kube-system:admin")
            refused = gw.request("PUT", raw, token=forged, body=secret)
            assert refused.status == 401, refused
        probe.assert_responsive(max_seconds=1.0)
        status, live = cluster.request("GET", "/api/v1/namespaces/%s/secrets/s" % namespace)
        assert status == 200 and base64.b64decode(live["data"]["password"]).decode() == value
        log = gw.log(whole=True)
        assert "Body of PUT /api/v1/_raw/secret" in log  # debug logging was on
        for shown in (value, encoded, pull["data"], admin_token, forged):
            assert shown not in log, shown[:12]
        audit = [json.loads(line) for line in log.splitlines()
                 if line.startswith('{"id":') and '"status":401' in line]
        assert audit and all((e["user"], e["userVerified"], e["userSource"]) == (
            "system:serviceaccount:kube-system:admin", False, "claim") for e in audit), audit
    finally:
        gw.stop()
