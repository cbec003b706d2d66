"""Built-in kinds beyond the specification's 28: resourcequota, limitrange, endpointslice,
lease, priorityclass, runtimeclass, csidriver, mutatingwebhookconfiguration and
validatingwebhookconfiguration. Lists (all namespaces, namespaced), details, rights (401, 403
with the API server's message, 404, 400), filter/sort/page, the watch cache against the
pass-through path, and /apidocs.json.

The webhook configurations fail open (``failurePolicy: Ignore``), point at a service that does
not exist, and match only a resource no API server serves, in namespaces with a label nobody
has: they can never be called, let alone break another test's writes."""

import secrets

import jsonschema
import pytest

from dashboard_api.app import options
from dashboard_api.cache import slim, watchcache as cache
from dashboard_api.kinds import table as kinds
from tests.cache.helpers import authorization_misses, converge, wait_synced
from tests.resources import kube
from tests.resources.checks import forbidden, get, missing
from tests.support.gateway import Gateway

# kind: (API group, plural); the list order is NEW_KINDS, the namespaced ones first.
KINDS = {"resourcequota": ("", "resourcequotas"), "limitrange": ("", "limitranges"),
         "endpointslice": ("discovery.k8s.io", "endpointslices"),
         "lease": ("coordination.k8s.io", "leases"),
         "priorityclass": ("scheduling.k8s.io", "priorityclasses"),
         "runtimeclass": ("node.k8s.io", "runtimeclasses"),
         "csidriver": ("storage.k8s.io", "csidrivers"),
         "mutatingwebhookconfiguration": ("admissionregistration.k8s.io",
                                          "mutatingwebhookconfigurations"),
         "validatingwebhookconfiguration": ("admissionregistration.k8s.io",
                                            "validatingwebhookconfigurations")}
NEW_KINDS = tuple(KINDS)
NAMESPACED = NEW_KINDS[:4]
PLURALS = {kind: plural for kind, (_, plural) in KINDS.items()}
# How the API server names each in its messages ("leases.coordination.k8s.io").
QUALIFIED = {kind: "%s.%s" % (plural, group) if group else plural
             for kind, (group, plural) in KINDS.items()}
RENEWED = "2024-05-01T10:00:00.000000Z"


@pytest.fixture(scope="module")
def cached(cluster):
    """A gateway with the watch cache, leases included (they are opt-in), and the API
    document; started first so it syncs while the objects are made."""
    gw = Gateway.start(cluster, "--enable-openapi", "--access-cache-ttl=1s",
                       "--watch-cache-opt-in=lease")
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def passthrough(cluster):
    """A gateway whose every list goes to the API server, to compare the cache with."""
    gw = Gateway.start(cluster, "--watch-cache=false")
    yield gw
    gw.stop()


def _slice_version(cluster):
    # Kubernetes 1.20 (the local cluster) serves discovery.k8s.io as v1beta1 only; 1.21 on, v1.
    return cluster.served_version("discovery.k8s.io", "endpointslices", ("v1", "v1beta1"))


def _endpoint(version, address, node, zone, **extra):
    out = dict({"addresses": [address], "conditions": {"ready": True}}, **extra)
    if version == "v1":
        out.update(nodeName=node, zone=zone)
    else:
        out["topology"] = {"kubernetes.io/hostname": node, "topology.kubernetes.io/zone": zone}
    return out


def _webhook(name, tag, **extra):
    return dict({
        "name": name, "failurePolicy": "Ignore", "sideEffects": "None",
        "admissionReviewVersions": ["v1"], "timeoutSeconds": 2,
        "clientConfig": {"service": {"namespace": "default", "name": "t-missing-" + tag,
                                     "path": "/check", "port": 443},
                         "caBundle": "Y2EgYnVuZGxl"},
        "namespaceSelector": {"matchLabels": {"tests.example.com/never": tag}},
        "rules": [{"operations": ["CREATE"], "apiGroups": ["tests.example.com"],
                   "apiVersions": ["v1"], "resources": ["gadgets"], "scope": "*"}]}, **extra)


@pytest.fixture(scope="module")
def world(cluster, cached):
    """One object set for the module: two namespaces, cluster-scoped objects named t-<tag>-*."""
    tag = secrets.token_hex(3)
    ns, other = cluster.new_namespace(), cluster.new_namespace()
    made = []

    def make(kind, body, where=None):
        group, plural = KINDS[kind]
        base = "/apis/%s/v1" % group if group else "/api/v1"
        path = "%s/namespaces/%s/%s" % (base, where, plural) if where else "%s/%s" % (
            base, plural)
        obj = kube.create(cluster, path, body)
        if not where:
            made.append(path + "/" + body["metadata"]["name"])
        return obj

    try:
        make("resourcequota", {"metadata": {"name": "compute"}, "spec": {
            "hard": {"pods": "10", "requests.cpu": "2"}, "scopes": ["NotTerminating"]}}, ns)
        make("resourcequota", {"metadata": {"name": "by-class"}, "spec": {
            "hard": {"pods": "3"}, "scopeSelector": {"matchExpressions": [
                {"scopeName": "PriorityClass", "operator": "In", "values": ["t-high"]}]}}}, ns)
        make("resourcequota", {"metadata": {"name": "counts"}, "spec": {
            "hard": {"configmaps": "7"}}}, other)
        make("limitrange", {"metadata": {"name": "limits"}, "spec": {"limits": [
            {"type": "Container", "max": {"cpu": "1"},
             "default": {"cpu": "500m", "memory": "256Mi"}}]}}, ns)

        version = _slice_version(cluster)
        kube.create(cluster, "/apis/discovery.k8s.io/%s/namespaces/%s/endpointslices" % (
            version, ns), {
            "metadata": {"name": "web-abc", "labels": {
                "kubernetes.io/service-name": "web",
                "endpointslice.kubernetes.io/managed-by": "tests"}},
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
            "endpoints": [
                _endpoint(version, "10.0.0.1", "node-a", "z1", hostname="web-1",
                          targetRef={"kind": "Pod", "name": "web-1", "namespace": ns}),
                _endpoint(version, "10.0.0.2", "node-b", "z2")]})
        kube.create(cluster, "/apis/discovery.k8s.io/%s/namespaces/%s/endpointslices" % (
            version, ns), {"metadata": {"name": "api-xyz", "labels": {
                "kubernetes.io/service-name": "api",
                "endpointslice.kubernetes.io/managed-by": "tests"}},
            "addressType": "IPv6", "endpoints": []})

        for name, holder in (("lock-a", "controller-1"), ("lock-b", "controller-2")):
            make("lease", {"metadata": {"name": name}, "spec": {
                "holderIdentity": holder, "leaseDurationSeconds": 15,
                "acquireTime": RENEWED, "renewTime": RENEWED, "leaseTransitions": 3}}, ns)
        make("lease", {"metadata": {"name": "lock-c"}, "spec": {}}, other)

        for name, value, extra in (("high", 100000, {"description": "for the front end"}),
                                   ("low", -5, {"preemptionPolicy": "Never"}),
                                   ("mid", 500, {})):
            make("priorityclass", {"metadata": {"name": "t-%s-%s" % (tag, name)},
                                   "value": value, **extra})
        make("runtimeclass", {"metadata": {"name": "t-%s-gvisor" % tag}, "handler": "runsc",
                              "overhead": {"podFixed": {"cpu": "100m", "memory": "20Mi"}},
                              "scheduling": {"nodeSelector": {"sandbox": "yes"}}})
        make("runtimeclass", {"metadata": {"name": "t-%s-plain" % tag}, "handler": "runc"})
        make("csidriver", {"metadata": {"name": "t-%s.csi.example.com" % tag}, "spec": {
            "attachRequired": False, "podInfoOnMount": True,
            "volumeLifecycleModes": ["Persistent", "Ephemeral"]}})
        make("mutatingwebhookconfiguration", {
            "metadata": {"name": "t-%s-inject" % tag},
            "webhooks": [_webhook("inject.tests.example.com", tag,
                                  reinvocationPolicy="IfNeeded")]})
        make("validatingwebhookconfiguration", {
            "metadata": {"name": "t-%s-policy" % tag},
            "webhooks": [_webhook("first.tests.example.com", tag),
                         _webhook("second.tests.example.com", tag, failurePolicy="Ignore",
                                  clientConfig={"url": "https://127.0.0.1:9/never"})]})
        for where, name in ((ns, "compute"), (ns, "by-class"), (other, "counts")):
            kube.wait_object(cluster, "/api/v1/namespaces/%s/resourcequotas/%s" % (where, name),
                             lambda q: (q.get("status") or {}).get("used"),
                             what="the quota controller's count")
        yield {"tag": tag, "ns": ns, "other": other, "slice_version": version}
    finally:
        for path in reversed(made):
            cluster.request("DELETE", path)
        for name in (ns, other):
            cluster.request("DELETE", "/api/v1/namespaces/" + name)


def test_quotas_and_limit_ranges(gateway, world, admin_token):
    ns, other = world["ns"], world["other"]
    body = get(gateway, "/api/v1/resourcequota/" + ns, admin_token, sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    by_class, compute = body["items"]
    assert compute == {"objectMeta": compute["objectMeta"],
                       "typeMeta": {"kind": "resourcequota"}, "scopes": ["NotTerminating"],
                       "statusList": {"pods": {"used": "0", "hard": "10"},
                                      "requests.cpu": {"used": "0", "hard": "2"}}}
    assert compute["objectMeta"]["namespace"] == ns and compute["objectMeta"]["uid"]
    assert by_class["statusList"] == {"pods": {"used": "0", "hard": "3"}}
    assert "scopes" not in by_class and "scopeSelector" not in by_class
    both = get(gateway, "/api/v1/resourcequota/%s,%s" % (ns, other), admin_token,
               sortBy="d,name")
    assert kube.names(both, "items") == ["counts", "compute", "by-class"]
    assert both["items"][0]["statusList"]["configmaps"]["hard"] == "7"

    d = get(gateway, "/api/v1/resourcequota/%s/by-class" % ns, admin_token)
    assert d["scopeSelector"] == {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["t-high"]}]}
    assert d["statusList"] == by_class["statusList"]
    # The namespace detail embeds the same quota items.
    ns_detail = get(gateway, "/api/v1/namespace/" + ns, admin_token)
    assert sorted(ns_detail["resourceQuotaList"]["items"],
                  key=lambda q: q["objectMeta"]["name"]) == [by_class, compute]

    limits = get(gateway, "/api/v1/limitrange/" + ns, admin_token)
    [item] = limits["items"]
    assert item["typeMeta"] == {"kind": "limitrange"} and limits["listMeta"]["totalItems"] == 1
    assert sorted(item["limits"], key=lambda i: i["resourceName"]) == [
        {"resourceName": "cpu", "resourceType": "Container", "max": "1", "default": "500m",
         "defaultRequest": "500m"},
        {"resourceName": "memory", "resourceType": "Container", "default": "256Mi",
         "defaultRequest": "256Mi"}]
    assert item["limits"] == ns_detail["resourceLimits"]
    assert get(gateway, "/api/v1/limitrange/%s/limits" % ns, admin_token) == item
    assert get(gateway, "/api/v1/limitrange/" + other, admin_token)["items"] == []


def test_endpoint_slices(cluster, gateway, world, admin_token):
    ns = world["ns"]
    _, version = cluster.request("GET", "/version")
    # Discovery picks the version: the local cluster (1.20) serves only v1beta1.
    assert world["slice_version"] == ("v1beta1" if version["minor"] == "20" else "v1")
    body = get(gateway, "/api/v1/endpointslice/" + ns, admin_token, sortBy="d,name")
    assert kube.names(body, "items") == ["web-abc", "api-xyz"]
    web, api = body["items"]
    assert web["typeMeta"] == {"kind": "endpointslice"}
    assert (web["addressType"], web["serviceName"]) == ("IPv4", "web")
    assert web["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    # v1beta1's topology map and v1's fields read the same.
    assert web["endpoints"] == [
        {"addresses": ["10.0.0.1"], "conditions": {"ready": True}, "hostname": "web-1",
         "nodeName": "node-a", "zone": "z1",
         "targetRef": {"kind": "Pod", "name": "web-1", "namespace": ns}},
        {"addresses": ["10.0.0.2"], "conditions": {"ready": True}, "hostname": None,
         "nodeName": "node-b", "zone": "z2", "targetRef": None}]
    assert (api["addressType"], api["serviceName"], api["endpoints"], api["ports"]) == (
        "IPv6", "api", [], [])
    assert get(gateway, "/api/v1/endpointslice/%s/web-abc" % ns, admin_token) == web
    raw = get(gateway, "/api/v1/_raw/endpointslice/namespace/%s/name/web-abc" % ns, admin_token)
    assert raw["apiVersion"] == "discovery.k8s.io/" + world["slice_version"]
    by_service = get(gateway, "/api/v1/endpointslice/" + ns, admin_token,
                     filterBy="serviceName,we")
    assert kube.names(by_service, "items") == ["web-abc"]
    by_type = get(gateway, "/api/v1/endpointslice/" + ns, admin_token, sortBy="a,addressType")
    assert kube.names(by_type, "items") == ["web-abc", "api-xyz"]


def test_leases(gateway, world, admin_token):
    ns, other = world["ns"], world["other"]
    body = get(gateway, "/api/v1/lease/%s,%s" % (ns, other), admin_token, sortBy="a,name",
               filterBy="name,lock")
    assert kube.names(body, "items") == ["lock-a", "lock-b", "lock-c"]
    a, b, c = body["items"]
    assert a == {"objectMeta": a["objectMeta"], "typeMeta": {"kind": "lease"},
                 "holderIdentity": "controller-1", "leaseDurationSeconds": 15,
                 "acquireTime": RENEWED, "renewTime": RENEWED, "leaseTransitions": 3}
    assert (c["holderIdentity"], c["renewTime"], c["leaseTransitions"]) == ("", None, 0)
    assert get(gateway, "/api/v1/lease/%s/lock-b" % ns, admin_token) == b
    held = get(gateway, "/api/v1/lease/%s,%s" % (ns, other), admin_token,
               filterBy="holderIdentity,controller-2")
    assert kube.names(held, "items") == ["lock-b"]
    # Every node renews its own lease in kube-node-lease: listed across all namespaces.
    nodes = get(gateway, "/api/v1/lease/kube-node-lease", admin_token)
    assert nodes["listMeta"]["totalItems"] >= 2
    assert all(n["holderIdentity"] == n["objectMeta"]["name"] and n["renewTime"]
               for n in nodes["items"])
    every = get(gateway, "/api/v1/lease", admin_token, itemsPerPage=100)
    assert {"lock-a", "lock-c"} <= set(kube.names(every, "items"))


def test_priority_and_runtime_classes(gateway, world, admin_token):
    tag = world["tag"]
    body = get(gateway, "/api/v1/priorityclass", admin_token, filterBy="name,t-" + tag,
               sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 3} and body["errors"] == []
    high, low, mid = body["items"]
    assert high == {"objectMeta": high["objectMeta"], "typeMeta": {"kind": "priorityclass"},
                    "value": 100000, "globalDefault": False,
                    "preemptionPolicy": "PreemptLowerPriority",
                    "description": "for the front end"}
    assert "namespace" not in high["objectMeta"]
    assert (low["value"], low["preemptionPolicy"], mid["description"]) == (-5, "Never", "")
    assert get(gateway, "/api/v1/priorityclass/t-%s-low" % tag, admin_token) == low
    system = get(gateway, "/api/v1/priorityclass", admin_token, filterBy="name,system-node")
    assert [(i["objectMeta"]["name"], i["value"]) for i in system["items"]] == [
        ("system-node-critical", 2000001000)]

    runtimes = get(gateway, "/api/v1/runtimeclass", admin_token, filterBy="name,t-" + tag,
                   sortBy="d,name")
    plain, gvisor = runtimes["items"]
    assert plain == {"objectMeta": plain["objectMeta"], "typeMeta": {"kind": "runtimeclass"},
                     "handler": "runc"}
    assert gvisor["handler"] == "runsc"
    d = get(gateway, "/api/v1/runtimeclass/t-%s-gvisor" % tag, admin_token)
    assert d["overhead"] == {"podFixed": {"cpu": "100m", "memory": "20Mi"}}
    assert d["scheduling"] == {"nodeSelector": {"sandbox": "yes"}}
    d = get(gateway, "/api/v1/runtimeclass/t-%s-plain" % tag, admin_token)
    assert (d["overhead"], d["scheduling"]) == (None, None)


def test_csi_drivers(gateway, world, admin_token):
    name = "t-%s.csi.example.com" % world["tag"]
    body = get(gateway, "/api/v1/csidriver", admin_token, filterBy="name," + name)
    [item] = body["items"]
    assert item["typeMeta"] == {"kind": "csidriver"}
    assert (item["attachRequired"], item["podInfoOnMount"], item["volumeLifecycleModes"]) == (
        False, True, ["Persistent", "Ephemeral"])
    assert item["storageCapacity"] is False   # defaulted by the API server
    d = get(gateway, "/api/v1/csidriver/" + name, admin_token)
    assert {k: d[k] for k in item} == item
    assert d["requiresRepublish"] is False and d["tokenRequests"] is None


def test_webhook_configurations(gateway, world, admin_token):
    tag = world["tag"]
    service = {"namespace": "default", "name": "t-missing-" + tag, "path": "/check",
               "port": 443}
    rules = [{"operations": ["CREATE"], "apiGroups": ["tests.example.com"],
              "apiVersions": ["v1"], "resources": ["gadgets"], "scope": "*"}]
    body = get(gateway, "/api/v1/mutatingwebhookconfiguration", admin_token,
               filterBy="name,t-" + tag)
    [item] = body["items"]
    assert item == {"objectMeta": item["objectMeta"],
                    "typeMeta": {"kind": "mutatingwebhookconfiguration"},
                    "webhooks": [{"name": "inject.tests.example.com", "rules": rules,
                                  "failurePolicy": "Ignore", "sideEffects": "None",
                                  "clientConfig": {"service": service}}]}
    [hook] = get(gateway, "/api/v1/mutatingwebhookconfiguration/t-%s-inject" % tag,
                 admin_token)["webhooks"]
    assert hook["clientConfig"] == {"service": service}   # never the CA bundle
    assert (hook["reinvocationPolicy"], hook["timeoutSeconds"], hook["matchPolicy"]) == (
        "IfNeeded", 2, "Equivalent")
    assert hook["namespaceSelector"] == {"matchLabels": {"tests.example.com/never": tag}}
    assert hook["admissionReviewVersions"] == ["v1"] and "objectSelector" in hook

    validating = get(gateway, "/api/v1/validatingwebhookconfiguration/t-%s-policy" % tag,
                     admin_token)
    first, second = validating["webhooks"]
    assert validating["typeMeta"] == {"kind": "validatingwebhookconfiguration"}
    assert first["clientConfig"] == {"service": service}
    assert second["clientConfig"] == {"url": "https://127.0.0.1:9/never"}
    assert "reinvocationPolicy" not in first
    listed = get(gateway, "/api/v1/validatingwebhookconfiguration", admin_token,
                 filterBy="name,t-" + tag)
    assert [w["name"] for w in listed["items"][0]["webhooks"]] == [
        "first.tests.example.com", "second.tests.example.com"]
    assert "Y2EgYnVuZGxl" not in gateway.get("/api/v1/validatingwebhookconfiguration",
                                             token=admin_token).data.decode()


def test_sort_and_page_cluster_scoped(gateway, world, admin_token):
    tag = world["tag"]
    base = {"filterBy": "name,t-" + tag, "sortBy": "d,name", "itemsPerPage": "2"}
    first = get(gateway, "/api/v1/priorityclass", admin_token, **base)
    second = get(gateway, "/api/v1/priorityclass", admin_token, **dict(base, page="2"))
    assert first["listMeta"] == second["listMeta"] == {"totalItems": 3}
    assert [kube.names(first, "items"), kube.names(second, "items")] == [
        ["t-%s-mid" % tag, "t-%s-low" % tag], ["t-%s-high" % tag]]
    assert get(gateway, "/api/v1/priorityclass", admin_token,
               filterBy="name,t-%s,name,no-such" % tag)["items"] == []


def test_rights_and_missing(gateway, world, admin_token, norights_token):
    ns = world["ns"]
    for kind in NEW_KINDS:
        plural = PLURALS[kind]
        paths = ["/api/v1/" + kind]
        if kind in NAMESPACED:
            paths.append("/api/v1/%s/%s" % (kind, ns))
        detail = "/api/v1/%s/%s" % (kind, ns + "/nope" if kind in NAMESPACED else "nope")
        for path in paths + [detail]:
            reply = gateway.get(path)
            assert reply.status == 401 and reply.json()["reason"] == "Unauthorized", (path,
                                                                                      reply)
        for path in paths:
            forbidden(gateway, path, norights_token, "list", plural)
        forbidden(gateway, detail, norights_token, "get", plural)
        missing(gateway, detail, admin_token, '%s "nope" not found' % QUALIFIED[kind])
        reply = gateway.get(paths[-1], token=admin_token, params={"itemsPerPage": "-1"})
        assert reply.status == 400, (kind, reply)


def _paths(world):
    """Every kind over all namespaces (sorted, and paged), and its objects of this module:
    the two namespaces, or filtered by the tag."""
    ns, other, tag = world["ns"], world["other"], world["tag"]
    out = []
    for kind in NEW_KINDS:
        out += ["/api/v1/%s?sortBy=d,creationTimestamp,a,name&itemsPerPage=100" % kind,
                "/api/v1/%s?itemsPerPage=2&page=2&sortBy=a,name" % kind]
        if kind in NAMESPACED:
            out.append("/api/v1/%s/%s,%s?sortBy=a,name" % (kind, ns, other))
        else:
            out.append("/api/v1/%s?filterBy=name,t-%s&sortBy=d,name" % (kind, tag))
    return out


def test_cached_lists_equal_passthrough(cluster, cached, passthrough, world, admin_token,
                                        norights_token):
    wait_synced(cached, NEW_KINDS, timeout=30)
    misses = authorization_misses(cached)
    converge(cached, passthrough, _paths(world), admin_token)
    # The cached gateway answered from its cache: only that path asks for the caller's rights.
    assert authorization_misses(cached) > misses
    # A write reaches the cached list through the watch.
    ns = world["ns"]
    kube.create(cluster, "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % ns,
                {"metadata": {"name": "fresh"}, "spec": {"holderIdentity": "late"}})
    converge(cached, passthrough, ["/api/v1/lease/%s?sortBy=a,name" % ns], admin_token)
    assert "fresh" in kube.names(get(cached, "/api/v1/lease/" + ns, admin_token), "items")
    # The cache answers only after the API server said the caller may list.
    for kind in NEW_KINDS:
        forbidden(cached, "/api/v1/" + kind, norights_token, "list", PLURALS[kind])


def test_api_document_names_and_describes_the_routes(cached, world, admin_token):
    doc = cached.get("/apidocs.json").json()
    schemas = doc["components"]["schemas"]
    ns, tag = world["ns"], world["tag"]
    samples = {"resourcequota": "compute", "limitrange": "limits", "endpointslice": "web-abc",
               "lease": "lock-a", "priorityclass": "t-%s-high" % tag,
               "runtimeclass": "t-%s-gvisor" % tag, "csidriver": "t-%s.csi.example.com" % tag,
               "mutatingwebhookconfiguration": "t-%s-inject" % tag,
               "validatingwebhookconfiguration": "t-%s-policy" % tag}
    for kind in NEW_KINDS:
        namespaced = kind in NAMESPACED
        templates = ["/api/v1/" + kind,
                     "/api/v1/%s/{namespace}/{name}" % kind if namespaced
                     else "/api/v1/%s/{name}" % kind]
        if namespaced:
            templates.append("/api/v1/%s/{namespace}" % kind)
        for template in templates:
            assert "get" in doc["paths"][template], template
        # Real answers validate, and name no top-level field the document leaves out.
        listed = get(cached, "/api/v1/%s%s" % (kind, "/" + ns if namespaced else ""),
                     admin_token, filterBy="name," + samples[kind])
        detail = get(cached, "/api/v1/%s/%s%s" % (kind, ns + "/" if namespaced else "",
                                                  samples[kind]), admin_token)
        assert listed["items"], kind
        for answer, name in ((listed, "List." + kind), (detail, "Detail." + kind)):
            jsonschema.validate(answer, {"$ref": "#/components/schemas/" + name,
                                         "components": {"schemas": _plain(schemas)}})
        for item in listed["items"]:
            assert set(item) <= set(schemas["Item." + kind]["properties"]), kind
        assert set(detail) <= set(schemas["Detail." + kind]["properties"]), kind


def test_leases_are_cached_only_when_asked():
    """Every node renews its lease every 10 seconds: by default the cache leaves leases out
    (tests/bench/bench_leases.py measures what holding them costs); the other new kinds are
    cached."""
    assert "lease" not in cache.cached_names()
    assert set(NEW_KINDS) - {"lease"} <= set(cache.cached_names())
    assert "lease" in cache.cached_names(opt_in=("lease",))
    assert "secret" not in cache.cached_names(opt_in=("lease",))
    assert options.parse([]).watch_cache_opt_in == ()
    assert options.parse(["--watch-cache-opt-in=lease"]).watch_cache_opt_in == ("lease",)
    for wrong in ("secret", "pod", "lease,nope"):
        with pytest.raises(SystemExit):
            options.parse(["--watch-cache-opt-in=" + wrong])


def test_cache_keeps_no_ca_bundles():
    """What the cache keeps of a webhook configuration (and what the pass-through path slims
    alike): everything but each webhook's CA bundle, which no summary shows."""
    config = {"metadata": {"name": "x", "managedFields": [{}]}, "webhooks": [
        {"name": "a", "clientConfig": {"caBundle": "Y2E=", "url": "https://a"}, "rules": []},
        {"name": "b", "clientConfig": {"service": {"name": "s", "namespace": "n"}}},
        {"name": "c"}]}
    for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
        assert slim.slim(kinds.get(kind), config) == {"metadata": {"name": "x"}, "webhooks": [
            {"name": "a", "clientConfig": {"url": "https://a"}, "rules": []},
            {"name": "b", "clientConfig": {"service": {"name": "s", "namespace": "n"}}},
            {"name": "c"}]}
    assert config["webhooks"][0]["clientConfig"]["caBundle"] == "Y2E="   # a copy is slimmed


def _plain(schema):
    """OpenAPI 3.0's ``nullable`` as JSON Schema."""
    if isinstance(schema, list):
        return [_plain(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _plain(v) for k, v in schema.items() if k != "nullable"}
    if schema.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out
