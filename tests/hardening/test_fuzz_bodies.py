"""Oversized and deeply nested bodies on every operation that takes a body (from /apidocs.json,
as the fuzzer sees it): an oversized one is a 413 before it is read, a deeply nested one is
refused with a 400 (or the operation fails on its path first: 404), never a 5xx; the probe
keeps answering throughout. The fuzzer (test_fuzz.py, fuzzhooks.py) also sends deep bodies
among its generated writes."""

import json

import pytest

from tests.support.gateway import Gateway
from tests.support.probe import Probe

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def doc_gateway(cluster):
    gw = Gateway.start(cluster, "--enable-openapi", "--watch-cache=false",
                       "--max-body-size", "64Ki")
    yield gw
    gw.stop()


def body_operations(gw, namespace):
    doc = gw.get("/apidocs.json").json()
    for template, methods in sorted(doc["paths"].items()):
        for method, op in sorted(methods.items()):
            if "requestBody" not in op:
                continue
            path = template
            for param in op.get("parameters", []):
                if param["in"] == "path":
                    value = namespace if param["name"] == "namespace" else \
                        "deployment" if param["name"] == "kind" else "no-such-object"
                    path = path.replace("{%s}" % param["name"], value)
            csrf = None
            if method == "post" and "csrf" in json.dumps(op.get("security", [])):
                csrf = path[len("/api/v1/"):].split("/", 1)[0]
            yield method.upper(), path, csrf


def test_every_body_operation_refuses_oversized_and_deep_bodies(doc_gateway, admin_token,
                                                                 namespace):
    gw = doc_gateway
    operations = list(body_operations(gw, namespace))
    assert len(operations) >= 15, operations
    deep = ("[" * 5000 + "]" * 5000).encode()
    nested = json.dumps(json.loads("{\"a\":" * 150 + "1" + "}" * 150)).encode()
    seen = {}
    with Probe(gw, admin_token) as probe:
        for method, path, csrf in operations:
            big = gw.request(method, path, token=admin_token, raw_body=b" " * (LIMIT + 1),
                             headers={"Content-Type": "application/json"})
            assert big.status == 413, (method, path, big)
            for body in (deep, nested):
                reply = gw.request(method, path, token=admin_token, csrf=csrf, raw_body=body,
                                   headers={"Content-Type": "application/json"})
                assert reply.status < 500, (method, path, reply)
                assert reply.status in (400, 404, 413), (method, path, reply)
                seen[reply.status] = seen.get(reply.status, 0) + 1
    probe.assert_responsive(1.0)
    assert seen.get(400, 0) >= len(operations), seen
