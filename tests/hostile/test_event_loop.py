"""Request-controlled work never holds the event loop: each attack runs while the probe asks
/healthz and an authenticated list every 0.2 s, and every probe answers within 1 s; memory does
not grow by what the attack would have expanded to; nothing is created in the cluster."""

import json
import re
import time

from tests.gateway.helpers import assert_error, metric_value
from tests.hostile.conftest import rss_kib
from tests.support.probe import Probe

IMAGE = "/api/v1/appdeployment/validate/imagereference"
FROM_FILE = "/api/v1/appdeploymentfromfile"

# 600 bytes of nested aliases: nine levels of nine, 9^9 (387 million) strings once expanded.
LAUGHS = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n" + "".join(
    "%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n" % ((c, c) + (p,) * 9)
    for p, c in zip("abcdefgh", "bcdefghi"))
BOMB = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n" + \
    "data:\n  k: hello\n" + LAUGHS.replace("\n", "\n  ").join(["x:\n  ", ""])


def test_catastrophic_image_references_are_answered_at_once(gateway, admin_token):
    """`a`*26 + `!` held the loop 18 s (every added character doubled it)."""
    attacks = ["a" * 26 + "!", "a" * 40 + "!", "a" * 2000 + "!", "a-" * 1000 + "!",
               "a/" * 1000 + "!", "A" * 2040 + "!", "a" * 60_000]
    with Probe(gateway, admin_token) as probe:
        for reference in attacks:
            started = time.monotonic()
            reply = gateway.request("POST", IMAGE, body={"reference": reference})
            took = time.monotonic() - started
            assert reply.status == 200 and reply.json()["valid"] is False, reply
            assert took < 1.0, "%r... took %.2f s" % (reference[:30], took)
    probe.assert_responsive(1.0)
    # And good references still pass.
    for good in ("nginx", "docker.io/library/nginx:1.25", "my-reg.example:5000/a/b-c__d",
                 "busybox@sha256:" + "a" * 64):
        assert gateway.request("POST", IMAGE, body={"reference": good}).json()["valid"], good


def test_the_billion_laughs_deploy_file_is_refused_without_growing(cluster, gateway,
                                                                   admin_token, namespace):
    """With any bearer token and a free CSRF token: 1.4 GiB in 5 s before. Refused (400) before
    anything is expanded, with the admin's token too, and nothing is created."""
    before = rss_kib(gateway.proc.pid)
    with Probe(gateway, admin_token) as probe:
        for token in ("anything", admin_token):
            reply = gateway.request("POST", FROM_FILE, token=token, csrf="appdeploymentfromfile",
                                    body={"name": "f", "namespace": namespace,
                                          "content": BOMB})
            assert_error(reply, 400, "BadRequest", ["aliases counted as expanded"])
    probe.assert_responsive(1.0)
    assert rss_kib(gateway.proc.pid) - before < 30 * 1024
    status, body = cluster.request("GET", "/api/v1/namespaces/%s/configmaps" % namespace)
    assert status == 200
    assert [i["metadata"]["name"] for i in body["items"]
            if i["metadata"]["name"] != "kube-root-ca.crt"] == []


def test_a_few_aliases_still_deploy(cluster, gateway, admin_token, namespace):
    """Aliases within the limits work, as kubectl takes them."""
    content = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: anchored\n"
               "  labels: &l {app: x}\n  annotations: *l\ndata: {k: v}\n")
    reply = gateway.request("POST", FROM_FILE, token=admin_token, csrf="appdeploymentfromfile",
                            body={"name": "f", "namespace": namespace, "content": content})
    assert reply.status == 201, reply
    status, body = cluster.request("GET", "/api/v1/namespaces/%s/configmaps/anchored"
                                   % namespace)
    assert status == 200 and body["metadata"]["annotations"] == {"app": "x"}


def test_deep_and_wide_deploy_files_are_bounded(gateway, admin_token, namespace):
    """Deep nesting is refused before the (recursive) composer sees it; a 2.5 MB file of
    small nodes is scanned off the loop, and refused for its node count."""
    deep = "a: " + "[" * 5000 + "]" * 5000
    wide = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\ndata:\n" + "".join(
        "  k%d: v\n" % i for i in range(200_000))
    with Probe(gateway, admin_token) as probe:
        for content, words in ((deep, "nested deeper than"), (wide, "more than 300000 nodes")):
            started = time.monotonic()
            reply = gateway.request("POST", FROM_FILE, token=admin_token,
                                    csrf="appdeploymentfromfile",
                                    body={"name": "f", "namespace": namespace,
                                          "content": content})
            assert_error(reply, 400, "BadRequest", [words])
            assert time.monotonic() - started < 15
    probe.assert_responsive(1.0)


def test_a_huge_kubeconfig_is_refused_before_it_is_read(gateway, admin_token):
    """3.5 MiB took 14 s of parsing on the loop: sign-in takes 256 KiB at most (413), and a
    kubeconfig just under that is parsed off the loop."""
    pad = "# " + "x" * 100 + "\n"
    huge = "apiVersion: v1\nkind: Config\n" + pad * (3_500_000 // len(pad))
    many = "apiVersion: v1\nkind: Config\nusers:\n" + "".join(
        "- {name: u%d, user: {token: t}}\n" % i for i in range(7000))
    some = many[:many.index("- {name: u2500,")]
    assert 200_000 < len(many) < 256 * 1024
    with Probe(gateway, admin_token) as probe:
        reply = gateway.request("POST", "/api/v1/login", csrf="login",
                                body={"kubeConfig": huge})
        assert_error(reply, 413, "RequestEntityTooLarge", ["limit is 262144 bytes"])
        for content, words in ((many, "more than 20000 nodes"), (some, "no current-context")):
            started = time.monotonic()
            reply = gateway.request("POST", "/api/v1/login", csrf="login",
                                    body={"kubeConfig": content})
            assert_error(reply, 400, "BadRequest", [words])
            assert time.monotonic() - started < 5
    probe.assert_responsive(1.0)


def test_deeply_nested_json_bodies_are_400(gateway, admin_token):
    """ujson stops at depth 1024 by itself; our limit is 100, checked without recursion."""
    for depth in (101, 1023, 1_000_000):
        body = ("[" * depth + "]" * depth).encode()
        for method, path, csrf in (("POST", "/api/v1/can-i", "can-i"),
                                   ("PUT", "/api/v1/settings/global", None),
                                   ("POST", IMAGE, None)):
            reply = gateway.request(method, path, token=admin_token, csrf=csrf,
                                    raw_body=body[:4 * 1024 * 1024],
                                    headers={"Content-Type": "application/json"})
            if len(body) > 64 * 1024:   # every one of these routes takes a few fields
                assert_error(reply, 413, "RequestEntityTooLarge")
            else:
                assert_error(reply, 400, "BadRequest", ["nested deeper than 100"])
    ok = {"verb": "get", "resource": "pods", "namespace": "default"}
    assert gateway.request("POST", "/api/v1/can-i", token=admin_token, csrf="can-i",
                           body=ok).status == 200


def test_a_large_json_body_is_decoded_off_the_loop(gateway, admin_token):
    """3.6 MB of JSON (250,000 small objects) in a raw PUT (a route that takes 4 MiB: an
    edited object), three times: decoded in the parse pool, the probe keeps answering, and
    the body (no object of that path) changes nothing."""
    items = [{"k": i} for i in range(250_000)]
    body = json.dumps({"clusterName": "x", "junk": items}).encode()
    assert 3_000_000 < len(body) < 4 * 1024 * 1024
    before = rss_kib(gateway.proc.pid)
    with Probe(gateway, admin_token) as probe:
        for _ in range(3):
            reply = gateway.request("PUT", "/api/v1/_raw/configmap/namespace/default/name/x",
                                    token=admin_token, raw_body=body,
                                    headers={"Content-Type": "application/json"})
            assert reply.status == 400, reply
        # Without a token nothing is parsed: the 401 comes first.
        reply = gateway.request("PUT", "/api/v1/_raw/configmap/namespace/default/name/x",
                                raw_body=body, headers={"Content-Type": "application/json"})
        assert_error(reply, 401, "Unauthorized")
    probe.assert_responsive(1.0)
    assert rss_kib(gateway.proc.pid) - before < 150 * 1024
    assert gateway.get("/api/v1/_raw/configmap/namespace/default/name/x",
                       token=admin_token).status == 404


def test_control_characters_in_query_values_are_400(gateway, admin_token):
    """A random-seed fuzzer run: `itemsPerPage=%1C%02&page=` was a 200 (Tornado turns control
    characters into spaces and strips them, so the bad value read as absent)."""
    for query in ("itemsPerPage=%1C%02&page=", "page=%00", "filterBy=name,%09x",
                  "itemsPerPage=%D9%A1", "page=1%7F"):
        reply = gateway.get("/api/v1/cronjob/default?" + query, token=admin_token)
        assert_error(reply, 400, "BadRequest")
    assert gateway.get("/api/v1/cronjob/default?itemsPerPage=5&page=", token=admin_token) \
        .status == 200


def test_the_loop_lag_is_measured_and_stayed_low(gateway):
    """The lag histogram is on /metrics, sampled ten times a second; after the attacks above
    (same gateway) no sample was over a second."""
    time.sleep(0.5)
    text = gateway.get("/metrics").data.decode()
    count = float(re.search(r"^dashboard_event_loop_lag_seconds_count (\S+)$", text,
                            re.M).group(1))
    within = metric_value(text, "dashboard_event_loop_lag_seconds_bucket", le="1.0")
    assert count >= 3, text[:500]
    assert within == count, "loop lag over 1 s: %d of %d samples" % (count - within, count)


def test_routes_that_take_a_few_fields_refuse_a_large_body(gateway, admin_token):
    """--max-body-size (4 MiB) is for deploy files and edited objects; a permission check, a
    replica count, a rollout command, a namespace name or the settings take 64 KiB at most,
    refused before the body is read, so nobody has a large body decoded where it has no use."""
    large = json.dumps({"name": "x" * (100 * 1024)}).encode()
    for method, path, csrf in (
            ("POST", "/api/v1/can-i", "can-i"),
            ("POST", "/api/v1/namespace", "namespace"),
            ("PUT", "/api/v1/scale/deployment/default/nothing?scaleBy=1", None),
            ("PUT", "/api/v1/deployment/default/nothing/rollback", None),
            ("POST", "/api/v1/replicationcontroller/default/nothing/update/pod",
             "replicationcontroller"),
            ("PUT", "/api/v1/settings/global", None),
            ("PUT", "/settings/pinnedresources", None),
            ("POST", IMAGE, None)):
        reply = gateway.request(method, path, token=admin_token, csrf=csrf, raw_body=large,
                                headers={"Content-Type": "application/json"})
        assert_error(reply, 413, "RequestEntityTooLarge", ["limit is 65536 bytes"])
    # The 4 MiB routes still take it (a bad body there is a 400 after reading it).
    reply = gateway.request("POST", "/api/v1/appdeploymentfromfile", token=admin_token,
                            csrf="appdeploymentfromfile", raw_body=large,
                            headers={"Content-Type": "application/json"})
    assert reply.status == 400, reply
