"""Seeding helpers for the resource tests: objects created with the admin REST helper."""

POD_RESOURCES = {"requests": {"cpu": "50m", "memory": "32Mi"},
                 "limits": {"cpu": "200m", "memory": "128Mi"}}


def create(cluster, path, body):
    status, obj = cluster.request("POST", path, body)
    assert status == 201, (path, status, obj)
    return obj


def container(name="app", image="nginx:1.19", **extra):
    return dict({"name": name, "image": image, "resources": POD_RESOURCES}, **extra)


def pod_spec(*containers, **extra):
    return dict({"containers": list(containers) or [container()],
                 "terminationGracePeriodSeconds": 0}, **extra)


def template(labels, annotations=None, **spec):
    meta = {"labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": pod_spec(**spec)}


def pod(cluster, ns, name, labels=None, annotations=None, **spec):
    meta = {"name": name, "labels": labels or {"app": name}}
    if annotations:
        meta["annotations"] = annotations
    return create(cluster, "/api/v1/namespaces/%s/pods" % ns,
                  {"metadata": meta, "spec": pod_spec(**spec)})


def apps(cluster, ns, plural, name, labels, replicas=1, **spec):
    body = {"metadata": {"name": name, "labels": labels},
            "spec": dict({"selector": {"matchLabels": labels}, "template": template(labels)},
                         **spec)}
    if plural != "daemonsets":
        body["spec"]["replicas"] = replicas
    return create(cluster, "/apis/apps/v1/namespaces/%s/%s" % (ns, plural), body)


def replication_controller(cluster, ns, name, labels, replicas=1):
    return create(cluster, "/api/v1/namespaces/%s/replicationcontrollers" % ns, {
        "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": replicas, "selector": labels, "template": template(labels)}})


def service(cluster, ns, name, selector, ports=((80, "TCP"),), **spec):
    return create(cluster, "/api/v1/namespaces/%s/services" % ns, {
        "metadata": {"name": name},
        "spec": dict({"selector": selector,
                      "ports": [{"port": p, "protocol": proto} for p, proto in ports]}, **spec)})


def event(cluster, ns, name, involved, reason, message, type_=None, count=1,
          first="2024-05-01T10:00:00Z", last=None):
    body = {"metadata": {"name": name, "namespace": ns}, "involvedObject": involved,
            "reason": reason, "message": message, "count": count,
            "firstTimestamp": first, "lastTimestamp": last or first,
            "source": {"component": "tests", "host": "here"}}
    if type_:
        body["type"] = type_
    return create(cluster, "/api/v1/namespaces/%s/events" % ns, body)


def involved(obj, kind):
    meta = obj["metadata"]
    return {"kind": kind, "name": meta["name"], "namespace": meta.get("namespace", ""),
            "uid": meta["uid"], "apiVersion": obj.get("apiVersion", "v1")}


def wait_pods(cluster, ns, selector, count, phase="Running", timeout=60):
    """Waits until `count` pods matching `selector` are in `phase`; returns them."""
    found = []

    def ready():
        status, body = cluster.request("GET", "/api/v1/namespaces/%s/pods" % ns,
                                       params={"labelSelector": selector})
        found[:] = [p for p in body.get("items", []) if p["status"].get("phase") == phase]
        return status == 200 and len(found) >= count
    cluster.wait_for(ready, timeout=timeout, what="%d %s pods %s in %s" % (count, phase,
                                                                           selector, ns))
    return found


def wait_object(cluster, path, predicate, timeout=60, what="object"):
    holder = {}

    def check():
        status, body = cluster.request("GET", path)
        holder["obj"] = body
        return status == 200 and predicate(body)
    cluster.wait_for(check, timeout=timeout, what=what)
    return holder["obj"]


def grant(cluster, ns, sa, rules):
    """A service account in `ns` with a Role of `rules`; returns its token."""
    create(cluster, "/api/v1/namespaces/%s/serviceaccounts" % ns, {"metadata": {"name": sa}})
    create(cluster, "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles" % ns,
           {"metadata": {"name": sa}, "rules": rules})
    create(cluster, "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % ns, {
        "metadata": {"name": sa},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": sa},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]})
    token = cluster.service_account_token(ns, sa)
    first = rules[0]
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": {"verb": first["verbs"][0], "namespace": ns,
                                              "group": first["apiGroups"][0],
                                              "resource": first["resources"][0]}}}

    def bound():  # the authorizer's caches learn the new binding after a moment
        status, body = cluster.request(
            "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, token=token)
        return status == 201 and body["status"].get("allowed")
    cluster.wait_for(bound, timeout=30, what="the role binding of %s/%s" % (ns, sa))
    return token


def names(listing, key):
    return [i["objectMeta"]["name"] for i in listing[key]]
