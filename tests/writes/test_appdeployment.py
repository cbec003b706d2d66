"""Application deployment from the form and from files, the validators and the protocols."""


from tests.gateway.helpers import assert_error
from tests.writes.helpers import absent, bad, csrf_refused, forbidden, read

FORM = {"name": "shop", "containerImage": "nginx:1.19", "imagePullSecret": None,
        "containerCommand": None, "containerCommandArgs": "--port 8080", "replicas": 2,
        "portMappings": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
        "variables": [{"name": "MODE", "value": "test"}], "isExternal": False,
        "description": "the shop", "memoryRequirement": "64Mi", "cpuRequirement": 0.1,
        "labels": [{"key": "k8s-app", "value": "shop"}], "runAsPrivileged": False}


def deploy(gateway, token, body, csrf="appdeployment"):
    return gateway.request("POST", "/api/v1/appdeployment", token=token, body=body, csrf=csrf)


def test_deploy_from_the_form(cluster, gateway, namespace, admin_token):
    form = dict(FORM, namespace=namespace)
    dep = "/apis/apps/v1/namespaces/%s/deployments/shop" % namespace
    svc = "/api/v1/namespaces/%s/services/shop" % namespace
    csrf_refused(deploy(gateway, admin_token, form, csrf=None))
    forbidden(deploy(gateway, cluster.norights_token, form), "create", "deployments")
    bad(deploy(gateway, admin_token, dict(form, replicas=-2)), "replicas")
    bad(deploy(gateway, admin_token, dict(form, containerImage=None)), "containerImage")
    bad(deploy(gateway, admin_token, dict(form, portMappings=[{"port": "80"}])), "port")
    assert absent(cluster, dep) and absent(cluster, svc)

    reply = deploy(gateway, admin_token, form)
    assert reply.status == 201 and reply.json() == form, reply
    deployment = read(cluster, dep)
    assert deployment["metadata"]["labels"] == {"k8s-app": "shop"}
    assert deployment["metadata"]["annotations"]["description"] == "the shop"
    [c] = deployment["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "nginx:1.19" and c["args"] == ["--port", "8080"]
    assert c["env"] == [{"name": "MODE", "value": "test"}]
    assert c["resources"]["requests"] == {"cpu": "100m", "memory": "64Mi"}
    service = read(cluster, svc)
    assert service["spec"]["type"] == "ClusterIP"
    assert service["spec"]["selector"] == {"k8s-app": "shop"}
    [port] = service["spec"]["ports"]
    assert (port["port"], port["targetPort"]) == (80, 8080)
    # The deployment controller acts on it.
    cluster.wait_for(lambda: (read(cluster, dep).get("status") or {}).get("replicas") == 2,
                     timeout=30, what="two replicas")
    # A second deploy of the same name: the API server's conflict, nothing else created.
    assert_error(deploy(gateway, admin_token, form), 409, "AlreadyExists")


def test_validators_and_protocols(cluster, gateway, namespace, admin_token):
    name = gateway.request("POST", "/api/v1/appdeployment/validate/name", token=admin_token,
                           body={"name": "shop", "namespace": namespace})
    assert name.status == 200 and name.json() == {"valid": True}, name
    reply = deploy(gateway, admin_token, dict(FORM, namespace=namespace, portMappings=[]))
    assert reply.status == 201
    taken = gateway.request("POST", "/api/v1/appdeployment/validate/name", token=admin_token,
                            body={"name": "shop", "namespace": namespace})
    assert taken.json() == {"valid": False}
    # Someone who may not read there cannot tell: valid, as upstream.
    blind = gateway.request("POST", "/api/v1/appdeployment/validate/name",
                            token=cluster.norights_token,
                            body={"name": "shop", "namespace": namespace})
    assert blind.json() == {"valid": True}
    bad(gateway.request("POST", "/api/v1/appdeployment/validate/name", token=admin_token,
                        body={"name": 5, "namespace": namespace}), "required")
    assert_error(gateway.request("POST", "/api/v1/appdeployment/validate/name",
                                 body={"name": "x", "namespace": namespace}), 401)
    for ref, valid, reason in (("nginx:1.19", True, ""),
                               ("NGINX", False, "repository name must be lowercase")):
        reply = gateway.request("POST", "/api/v1/appdeployment/validate/imagereference",
                                body={"reference": ref})
        assert reply.status == 200 and reply.json() == {"valid": valid, "reason": reason}
    bad(gateway.request("POST", "/api/v1/appdeployment/validate/imagereference",
                        body={"reference": 3}), "reference")
    for protocol, external, valid in (("UDP", True, False), ("TCP", True, True)):
        reply = gateway.request("POST", "/api/v1/appdeployment/validate/protocol",
                                body={"protocol": protocol, "isExternal": external})
        assert reply.json() == {"valid": valid}
    bad(gateway.request("POST", "/api/v1/appdeployment/validate/protocol",
                        body={"protocol": "TCP", "isExternal": "no"}), "isExternal")
    protocols = gateway.get("/api/v1/appdeployment/protocols")
    assert protocols.status == 200 and protocols.json() == {"protocols": ["TCP", "UDP"]}


FILE = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: test
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "nginx:1.19"}]
---
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
 "spec": {"selector": {"app": "api"}, "ports": [{"port": 80}]}}
"""


def from_file(gateway, token, namespace, content, csrf="appdeploymentfromfile"):
    return gateway.request("POST", "/api/v1/appdeploymentfromfile", token=token, csrf=csrf,
                           body={"name": "f", "namespace": namespace, "content": content,
                                 "validate": True})


def test_deploy_from_a_file(cluster, gateway, namespace, admin_token):
    ns = namespace
    paths = ["/api/v1/namespaces/%s/configmaps/settings" % ns,
             "/apis/apps/v1/namespaces/%s/deployments/api" % ns,
             "/api/v1/namespaces/%s/services/api" % ns]
    csrf_refused(from_file(gateway, admin_token, ns, FILE, csrf=None))
    forbidden(from_file(gateway, cluster.norights_token, ns, FILE), "create", "configmaps")
    bad(from_file(gateway, admin_token, ns, "kind: [unclosed"), "not valid YAML")
    bad(from_file(gateway, admin_token, ns, FILE + "\n---\n- just\n- a list\n"),
        "document 4 is not an object")
    bad(gateway.request("POST", "/api/v1/appdeploymentfromfile", token=admin_token,
                        csrf="appdeploymentfromfile", body={"namespace": ns}), "content")
    assert all(absent(cluster, p) for p in paths)

    reply = from_file(gateway, admin_token, ns, FILE)
    assert reply.status == 201, reply
    assert reply.json() == {"name": "f", "content": FILE, "error": ""}
    assert read(cluster, paths[0])["data"] == {"mode": "test"}
    assert read(cluster, paths[2])["spec"]["ports"][0]["port"] == 80
    cluster.wait_for(lambda: (read(cluster, paths[1]).get("status") or {}).get("replicas"),
                     timeout=30, what="the file's deployment running")


def test_a_file_failing_part_way_says_what_was_created(cluster, gateway, namespace,
                                                       admin_token):
    ns = namespace
    unknown = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: first}\n---\n"
               "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\n---\n"
               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: third}\n")
    body = bad(from_file(gateway, admin_token, ns, unknown), "document 2 (Gizmo g)",
               "unknown resource kind: Gizmo", "created before it: ConfigMap %s/first" % ns)
    assert body["details"] == {"failedDocument": 2, "created": ["ConfigMap %s/first" % ns]}
    assert not absent(cluster, "/api/v1/namespaces/%s/configmaps/first" % ns)
    assert absent(cluster, "/api/v1/namespaces/%s/configmaps/third" % ns)

    invalid = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad_name}\n")
    body = assert_error(from_file(gateway, admin_token, ns, invalid), 422, "Invalid",
                        ["document 1 (ConfigMap bad_name)", "nothing was created"])
    # Namespaces as upstream: `_all` keeps each document's own namespace.
    other = cluster.new_namespace()
    try:
        own = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine, namespace: %s}\n"
               % other)
        assert from_file(gateway, admin_token, "_all", own).status == 201
        assert not absent(cluster, "/api/v1/namespaces/%s/configmaps/mine" % other)
        # Into another namespace than the request's: the API server refuses, nothing created.
        body = assert_error(from_file(gateway, admin_token, ns, own), 400, "BadRequest",
                            ["does not match the namespace"])
        assert absent(cluster, "/api/v1/namespaces/%s/configmaps/mine" % ns)
    finally:
        cluster.request("DELETE", "/api/v1/namespaces/" + other)


def test_writes_leave_an_audit_line_with_the_user_name_and_never_the_token(
        cluster, gateway, namespace, admin_token):
    from tests.gateway.helpers import audit_lines, full_log
    from tests.resources import kube
    token = kube.grant(cluster, namespace, "deployer", [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get"]}])
    content = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: audited}\n"
    assert from_file(gateway, token, namespace, content).status == 201

    def entries():  # written once the response has gone out
        return [e for e in audit_lines(gateway) if e["route"] == "appdeploymentfromfile"
                and e["name"] == "audited"]
    mine = cluster.wait_for(entries, timeout=10, what="the audit entry")[-1]
    assert mine["user"] == "system:serviceaccount:%s:deployer" % namespace
    assert mine["userVerified"] and mine["userSource"] == "token"
    assert (mine["method"], mine["status"]) == ("POST", 201)
    assert (mine["kind"], mine["namespace"]) == ("configmap", namespace)
    log = full_log(gateway)
    assert token not in log and admin_token not in log
