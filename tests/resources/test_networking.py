"""Services and networking: service (list, detail, event, pod, ingress), ingress (list,
detail, event), ingressclass (list, detail), networkpolicy (list, detail)."""

import secrets

from tests.resources import kube
from tests.resources.checks import confined, forbidden, get, missing

NET = "/apis/networking.k8s.io/v1"


def set_status(cluster, path, status):
    """Writes an object's status subresource (no controller does it in the local cluster)."""
    code, obj = cluster.request("GET", path)
    assert code == 200, obj
    obj["status"] = status
    code, body = cluster.request("PUT", path + "/status", obj)
    assert code == 200, body
    return body


def backend(service, port=80):
    return {"service": {"name": service, "port": {"number": port}}}


def rule(host, service):
    out = {"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend(service)}]}}
    if host:
        out["host"] = host
    return out


def ingress(cluster, ns, name, rules=(), default=None):
    spec = {"rules": list(rules)}
    if default:
        spec["defaultBackend"] = backend(default)
    return kube.create(cluster, "%s/namespaces/%s/ingresses" % (NET, ns),
                       {"metadata": {"name": name}, "spec": spec})


def test_service_list(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.service(cluster, ns, "web", {"app": "web"})
    kube.create(cluster, "/api/v1/namespaces/%s/services" % ns, {
        "metadata": {"name": "lb"},
        "spec": {"selector": {"app": "lb"}, "type": "LoadBalancer",
                 "externalIPs": ["198.51.100.9"],
                 "ports": [{"name": "https", "port": 443}, {"name": "alt", "port": 8443}]}})
    set_status(cluster, "/api/v1/namespaces/%s/services/lb" % ns,
               {"loadBalancer": {"ingress": [{"hostname": "lb.example.com", "ip": "192.0.2.1"},
                                             {"ip": "192.0.2.2"}]}})

    body = get(gateway, "/api/v1/service/" + ns, admin_token, sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    assert kube.names(body, "services") == ["lb", "web"]
    assert body["items"] == body["services"]
    lb, web = body["services"]
    assert web["typeMeta"] == {"kind": "service"}
    assert web["objectMeta"]["namespace"] == ns and web["objectMeta"]["uid"]
    assert web["type"] == "ClusterIP" and web["selector"] == {"app": "web"}
    assert web["clusterIP"].count(".") == 3
    assert web["internalEndpoint"] == {
        "host": "web." + ns, "ports": [{"port": 80, "protocol": "TCP", "nodePort": 0}]}
    assert web["externalEndpoints"] == []

    assert lb["type"] == "LoadBalancer"
    ports = lb["internalEndpoint"]["ports"]
    assert [(p["port"], p["protocol"]) for p in ports] == [(443, "TCP"), (8443, "TCP")]
    assert all(30000 <= p["nodePort"] <= 32767 for p in ports)
    # Hostname preferred over IP; external IPs after the load balancer's ingress points.
    assert lb["externalEndpoints"] == [{"host": "lb.example.com", "ports": ports},
                                       {"host": "192.0.2.2", "ports": ports},
                                       {"host": "198.51.100.9", "ports": ports}]

    filtered = get(gateway, "/api/v1/service/" + ns, admin_token, filterBy="type,Load")
    assert kube.names(filtered, "services") == ["lb"]
    by_type = get(gateway, "/api/v1/service/" + ns, admin_token, sortBy="d,type")
    assert kube.names(by_type, "services") == ["lb", "web"]


def test_service_detail(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.pod(cluster, ns, "web-1", labels={"app": "web"})
    kube.pod(cluster, ns, "web-2", labels={"app": "web"})
    pods = {p["status"]["podIP"]: p for p in kube.wait_pods(cluster, ns, "app=web", 2)}
    kube.service(cluster, ns, "web", {"app": "web"}, sessionAffinity="ClientIP")
    kube.service(cluster, ns, "manual", None, ports=((8080, "TCP"),))
    kube.create(cluster, "/api/v1/namespaces/%s/endpoints" % ns, {
        "metadata": {"name": "manual"},
        "subsets": [{"notReadyAddresses": [{"ip": "10.1.0.2"}],
                     "addresses": [{"ip": "10.1.0.1", "nodeName": "sim-node-1"}],
                     "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}]})
    kube.wait_object(cluster, "/api/v1/namespaces/%s/endpoints/web" % ns,
                     lambda ep: len(((ep.get("subsets") or [{}])[0]).get("addresses") or ()) == 2,
                     what="the endpoints of service web")

    manual = get(gateway, "/api/v1/service/%s/manual" % ns, admin_token)
    assert manual["objectMeta"]["name"] == "manual" and manual["typeMeta"] == {"kind": "service"}
    assert manual["internalEndpoint"]["host"] == "manual." + ns
    assert manual["selector"] is None and manual["sessionAffinity"] == "None"
    assert manual["errors"] == []
    port = [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert manual["endpointList"] == {"listMeta": {"totalItems": 2}, "endpoints": [
        {"objectMeta": {"creationTimestamp": None}, "typeMeta": {"kind": "endpoint"},
         "host": "10.1.0.1", "nodeName": "sim-node-1", "ready": True, "ports": port},
        {"objectMeta": {"creationTimestamp": None}, "typeMeta": {"kind": "endpoint"},
         "host": "10.1.0.2", "nodeName": None, "ready": False, "ports": port}]}

    web = get(gateway, "/api/v1/service/%s/web" % ns, admin_token)
    assert web["sessionAffinity"] == "ClientIP" and web["selector"] == {"app": "web"}
    endpoints = web["endpointList"]["endpoints"]
    assert web["endpointList"]["listMeta"] == {"totalItems": 2}
    assert {e["host"] for e in endpoints} == set(pods)
    for e in endpoints:
        assert e["ready"] is True and e["ports"] == [{"port": 80, "protocol": "TCP"}]
        assert e["nodeName"] == pods[e["host"]]["spec"]["nodeName"]


def test_service_detail_with_partial_rights(cluster, gateway, namespace):
    """May read services but not endpoints: the detail answers with the 403 in errors."""
    kube.service(cluster, namespace, "web", {"app": "web"})
    token = kube.grant(cluster, namespace, "svc-reader",
                       [{"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list"]}])
    reply = gateway.get("/api/v1/service/%s/web" % namespace, token=token)
    assert reply.status == 200, reply
    d = reply.json()
    assert d["endpointList"] == {"listMeta": {"totalItems": 0}, "endpoints": []}
    [error] = d["errors"]
    assert error["ErrStatus"]["code"] == 403 and error["ErrStatus"]["reason"] == "Forbidden"
    assert 'cannot get resource "endpoints"' in error["ErrStatus"]["message"]


def test_service_pods_and_events(cluster, gateway, namespace, admin_token):
    ns = namespace
    kube.pod(cluster, ns, "web-1", labels={"app": "web"})
    kube.pod(cluster, ns, "web-2", labels={"app": "web"})
    kube.pod(cluster, ns, "loner", labels={"app": "other"})
    kube.wait_pods(cluster, ns, "app in (web,other)", 3)
    svc = kube.service(cluster, ns, "web", {"app": "web"})
    kube.service(cluster, ns, "manual", None)
    kube.event(cluster, ns, "svc.1", kube.involved(svc, "Service"), "Updated", "about web",
               type_="Normal", first="2024-05-01T10:00:00Z")
    kube.event(cluster, ns, "svc.2", kube.involved(svc, "Service"), "SyncFailed", "again",
               first="2024-05-02T10:00:00Z")
    # Same name, another kind: not the service's (upstream matched by name only).
    kube.event(cluster, ns, "pod.1", {"kind": "Pod", "name": "web", "namespace": ns},
               "Pulled", "a pod called web")

    pods = get(gateway, "/api/v1/service/%s/web/pod" % ns, admin_token, sortBy="a,name")
    assert pods["listMeta"] == {"totalItems": 2} and pods["errors"] == []
    assert kube.names(pods, "pods") == ["web-1", "web-2"]
    assert pods["pods"][0]["status"] == "Running" and pods["pods"][0]["typeMeta"] == {
        "kind": "pod"}
    assert pods["cumulativeMetrics"] == []
    page = get(gateway, "/api/v1/service/%s/web/pod" % ns, admin_token, filterBy="name,-2")
    assert page["listMeta"] == {"totalItems": 1} and kube.names(page, "pods") == ["web-2"]
    # A service without a selector selects nothing (not every pod).
    none = get(gateway, "/api/v1/service/%s/manual/pod" % ns, admin_token)
    assert none["listMeta"] == {"totalItems": 0} and none["pods"] == []

    events = get(gateway, "/api/v1/service/%s/web/event" % ns, admin_token, sortBy="d,lastSeen")
    assert events["listMeta"] == {"totalItems": 2} and events["errors"] == []
    assert [e["objectMeta"]["name"] for e in events["events"]] == ["svc.2", "svc.1"]
    newest = events["events"][0]
    assert (newest["reason"], newest["type"], newest["message"]) == (
        "SyncFailed", "Warning", "again")
    assert (newest["objectKind"], newest["objectName"]) == ("Service", "web")


def test_service_ingresses(cluster, gateway, namespace, admin_token, cache_caught_up):
    ns = namespace
    for name in ("web", "api", "other", "unused"):
        kube.service(cluster, ns, name, {"app": name})
    ingress(cluster, ns, "front", [rule("a.example.com", "api")], default="web")
    ingress(cluster, ns, "side", [rule("b.example.com", "other"), rule("c.example.com", "web")])
    cache_caught_up("service", "ingress")

    def routed(service, **params):
        body = get(gateway, "/api/v1/service/%s/%s/ingress" % (ns, service), admin_token,
                   sortBy="a,name", **params)
        assert body["errors"] == []
        return body["listMeta"]["totalItems"], kube.names(body, "items")

    assert routed("web") == (2, ["front", "side"])
    assert routed("api") == (1, ["front"])
    assert routed("other") == (1, ["side"])
    assert routed("unused") == (0, [])
    assert routed("web", filterBy="name,si") == (1, ["side"])
    first = get(gateway, "/api/v1/service/%s/api/ingress" % ns, admin_token)["items"][0]
    assert first["typeMeta"] == {"kind": "ingress"} and first["hosts"] == ["a.example.com"]


def test_ingress_list_detail_and_events(cluster, gateway, namespace, other_namespace,
                                        admin_token, cache_caught_up):
    ns = namespace
    front = ingress(cluster, ns, "front", [rule("a.example.com", "api"), rule(None, "web"),
                                           rule("b.example.com", "web"),
                                           rule("a.example.com", "web")], default="web")
    ingress(cluster, ns, "bare", default="web")
    ingress(cluster, other_namespace, "elsewhere", [rule("z.example.com", "web")])
    path = "%s/namespaces/%s/ingresses/front" % (NET, ns)
    set_status(cluster, path, {"loadBalancer": {"ingress": [
        {"ip": "192.0.2.10"}, {"hostname": "front.example.com", "ip": "192.0.2.11"}]}})
    cache_caught_up("ingress")

    body = get(gateway, "/api/v1/ingress/" + ns, admin_token, sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    assert kube.names(body, "items") == ["bare", "front"]
    bare, item = body["items"]
    assert item["typeMeta"] == {"kind": "ingress"} and item["objectMeta"]["namespace"] == ns
    assert item["hosts"] == ["a.example.com", "b.example.com"]
    assert item["endpoints"] == [{"host": "192.0.2.10", "ports": None},
                                 {"host": "front.example.com", "ports": None}]
    assert bare["hosts"] == [] and bare["endpoints"] == []

    both = get(gateway, "/api/v1/ingress/%s,%s" % (ns, other_namespace), admin_token,
               sortBy="a,name")
    assert kube.names(both, "items") == ["bare", "elsewhere", "front"]

    d = get(gateway, "/api/v1/ingress/%s/front" % ns, admin_token)
    assert d["objectMeta"]["name"] == "front" and d["typeMeta"] == {"kind": "ingress"}
    assert d["hosts"] == item["hosts"] and d["endpoints"] == item["endpoints"]
    assert d["spec"] == cluster.request("GET", path)[1]["spec"]
    assert d["spec"]["defaultBackend"] == backend("web")
    assert d["status"]["loadBalancer"]["ingress"][0] == {"ip": "192.0.2.10"}
    assert d["errors"] == []

    kube.event(cluster, ns, "ing.1", kube.involved(front, "Ingress"), "Sync", "synced",
               type_="Normal")
    events = get(gateway, "/api/v1/ingress/%s/front/event" % ns, admin_token)
    assert [(e["reason"], e["objectKind"]) for e in events["events"]] == [("Sync", "Ingress")]
    assert get(gateway, "/api/v1/ingress/%s/bare/event" % ns, admin_token)["events"] == []


def test_ingress_class(cluster, gateway, admin_token, cluster_objects):
    name = "t-class-" + secrets.token_hex(4)
    path = NET + "/ingressclasses"
    kube.create(cluster, path, {"metadata": {"name": name}, "spec": {
        "controller": "example.com/ingress",
        "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                       "name": "external-lb"}}})
    cluster_objects.append("%s/%s" % (path, name))
    kube.create(cluster, path, {"metadata": {"name": name + "-b"},
                                "spec": {"controller": "example.com/other"}})
    cluster_objects.append("%s/%s-b" % (path, name))

    body = get(gateway, "/api/v1/ingressclass", admin_token, filterBy="name," + name,
               sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    first, second = body["items"]
    assert first["objectMeta"]["name"] == name and "namespace" not in first["objectMeta"]
    assert first["typeMeta"] == {"kind": "ingressclass"}
    assert (first["controller"], second["controller"]) == ("example.com/ingress",
                                                           "example.com/other")
    # The namespace property of a cluster-scoped list is empty: filtering on it keeps nothing.
    assert get(gateway, "/api/v1/ingressclass", admin_token,
               filterBy="name,%s,namespace,x" % name)["listMeta"] == {"totalItems": 0}

    d = get(gateway, "/api/v1/ingressclass/" + name, admin_token)
    assert d["controller"] == "example.com/ingress" and d["typeMeta"] == {"kind": "ingressclass"}
    assert d["parameters"] == {"Kind": "IngressParameters", "Name": "external-lb",
                               "ApiGroup": "k8s.example.com"}
    assert get(gateway, "/api/v1/ingressclass/%s-b" % name, admin_token)["parameters"] == {}


def test_network_policy(cluster, gateway, namespace, admin_token):
    ns = namespace
    path = "%s/namespaces/%s/networkpolicies" % (NET, ns)
    kube.create(cluster, path, {"metadata": {"name": "web-in"}, "spec": {
        "podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"role": "front"}}}],
                     "ports": [{"protocol": "TCP", "port": 80}]}],
        "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]}})
    kube.create(cluster, path, {"metadata": {"name": "deny-all"}, "spec": {"podSelector": {}}})

    body = get(gateway, "/api/v1/networkpolicy/" + ns, admin_token, sortBy="a,name")
    assert body["listMeta"] == {"totalItems": 2} and body["errors"] == []
    assert kube.names(body, "items") == ["deny-all", "web-in"]
    assert body["items"][1]["typeMeta"] == {"kind": "networkpolicy"}
    assert set(body["items"][1]) == {"objectMeta", "typeMeta"}

    stored = cluster.request("GET", path + "/web-in")[1]["spec"]
    d = get(gateway, "/api/v1/networkpolicy/%s/web-in" % ns, admin_token)
    assert d["podSelector"] == {"matchLabels": {"app": "web"}}
    assert d["policyTypes"] == ["Ingress", "Egress"]
    assert d["ingress"] == stored["ingress"] and d["ingress"][0]["ports"][0]["port"] == 80
    assert d["egress"] == [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}]
    assert d["errors"] == []
    deny = get(gateway, "/api/v1/networkpolicy/%s/deny-all" % ns, admin_token)
    assert deny["podSelector"] == {} and "ingress" not in deny and "egress" not in deny
    assert deny["policyTypes"] == ["Ingress"]  # the API server's default


def test_networking_rights(cluster, gateway, namespace, admin_token, editor_token,
                           norights_token):
    ns = namespace
    kube.service(cluster, ns, "web", {"app": "web"})
    ingress(cluster, ns, "front", default="web")
    for kind, resource in (("service", "services"), ("ingress", "ingresses"),
                           ("networkpolicy", "networkpolicies")):
        forbidden(gateway, "/api/v1/%s/%s" % (kind, ns), norights_token, "list", resource)
        confined(gateway, kind, editor_token, ns)
        assert gateway.get("/api/v1/" + kind + "/" + ns).status == 401
    forbidden(gateway, "/api/v1/ingressclass", norights_token, "list", "ingressclasses")
    reply = gateway.get("/api/v1/ingressclass", token=editor_token)
    assert reply.status == 403 and 'User "editor" cannot list' in reply.json()["message"]
    for suffix in ("", "/pod", "/event", "/ingress"):
        forbidden(gateway, "/api/v1/service/%s/web%s" % (ns, suffix), norights_token, "get",
                  "services")
    for suffix in ("", "/event"):
        forbidden(gateway, "/api/v1/ingress/%s/front%s" % (ns, suffix), norights_token, "get",
                  "ingresses")


def test_networking_missing_is_404(gateway, namespace, admin_token):
    ns = namespace
    for suffix in ("", "/pod", "/event", "/ingress"):
        missing(gateway, "/api/v1/service/%s/nope%s" % (ns, suffix), admin_token,
                'services "nope" not found')
    for suffix in ("", "/event"):
        missing(gateway, "/api/v1/ingress/%s/nope%s" % (ns, suffix), admin_token,
                'ingresses.networking.k8s.io "nope" not found')
    missing(gateway, "/api/v1/networkpolicy/%s/nope" % ns, admin_token,
            'networkpolicies.networking.k8s.io "nope" not found')
    missing(gateway, "/api/v1/ingressclass/nope-" + secrets.token_hex(4), admin_token,
            "ingressclasses.networking.k8s.io")
