"""Sample workloads for the demo and for tests that want a populated cluster.

`seed(cluster)` creates them (idempotent: "already exists" is fine) and waits until the
seeded deployments' pods are Running. API versions that differ between Kubernetes releases
(cron jobs, disruption budgets, autoscalers) are picked from discovery.
"""
import datetime

SHOP, DATA, BATCH = "demo-shop", "demo-data", "demo-batch"
NAMESPACES = [SHOP, DATA, BATCH]
CRD_GROUP = "demo.dashboard.io"
SIM = "sim.dashboard.io/"

# (namespace, name, replicas): what seed() waits for.
DEPLOYMENTS = [(SHOP, "frontend", 2), (SHOP, "backend", 2), (DATA, "reporting", 1)]


class SeedError(Exception):
    pass


def _create(cluster, collection, body, created):
    status, resp = cluster.request("POST", collection, body)
    if status not in (200, 201, 409):
        reason = resp.get("message") if isinstance(resp, dict) else resp
        raise SeedError(f"POST {collection} ({body['metadata']['name']}) -> {status}: {reason}")
    path = f"{collection}/{body['metadata']['name']}"
    created.append(path)
    return path


def _ns(namespace, group_version, plural):
    prefix = "/api/v1" if group_version == "v1" else f"/apis/{group_version}"
    return f"{prefix}/namespaces/{namespace}/{plural}"


def _meta(name, labels=None, annotations=None):
    meta = {"name": name}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    return meta


def _pod_spec(image, port=None, sa=None, volumes=None, mounts=None, restart="Always"):
    container = {
        "name": "app", "image": image,
        "resources": {"requests": {"cpu": "50m", "memory": "32Mi"},
                      "limits": {"cpu": "200m", "memory": "128Mi"}},
    }
    if port:
        container["ports"] = [{"containerPort": port, "name": "http"}]
    if mounts:
        container["volumeMounts"] = mounts
    spec = {"containers": [container], "restartPolicy": restart}
    if sa:
        spec["serviceAccountName"] = sa
    if volumes:
        spec["volumes"] = volumes
    return spec


def _template(app, image, annotations=None, **spec_args):
    meta = {"labels": {"app": app}}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": _pod_spec(image, **spec_args)}


def _controller(name, app, image, replicas, annotations=None, **spec_args):
    return {"metadata": _meta(name, {"app": app}),
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": app}},
                     "template": _template(app, image, annotations, **spec_args)}}


def _service(name, app, port, target=None, kind="ClusterIP", headless=False):
    spec = {"type": kind, "selector": {"app": app},
            "ports": [{"name": "http", "port": port, "targetPort": target or port}]}
    if headless:
        spec["clusterIP"] = "None"
    return {"metadata": _meta(name, {"app": app}), "spec": spec}


def _cluster_objects(cluster, created):
    _create(cluster, "/apis/networking.k8s.io/v1/ingressclasses", {
        "metadata": _meta("demo-nginx"),
        "spec": {"controller": "example.com/ingress-nginx"}}, created)
    _create(cluster, "/apis/storage.k8s.io/v1/storageclasses", {
        "metadata": _meta("demo-manual"), "provisioner": "kubernetes.io/no-provisioner",
        "reclaimPolicy": "Retain", "volumeBindingMode": "Immediate"}, created)
    for name, size in (("demo-pv-data", "1Gi"), ("demo-pv-spare", "2Gi")):
        _create(cluster, "/api/v1/persistentvolumes", {
            "metadata": _meta(name),
            "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "demo-manual",
                     "persistentVolumeReclaimPolicy": "Retain",
                     "hostPath": {"path": f"/tmp/{name}"}}}, created)
    _create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "metadata": _meta("demo-viewer"),
        "rules": [{"apiGroups": [""], "resources": ["pods", "services"],
                   "verbs": ["get", "list", "watch"]}]}, created)
    _create(cluster, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": _meta("demo-viewer"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "demo-viewer"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                      "name": "demo-viewers"}]}, created)
    for ns in NAMESPACES:
        _create(cluster, "/api/v1/namespaces",
                {"metadata": _meta(ns, {"demo.dashboard.io/seeded": "true"})}, created)


def _shop(cluster, created, versions):
    ns = SHOP
    core, apps = (lambda p: _ns(ns, "v1", p)), (lambda p: _ns(ns, "apps/v1", p))
    _create(cluster, core("configmaps"), {
        "metadata": _meta("frontend-config"),
        "data": {"LISTEN_PORT": "80", "nginx.conf": "server { listen 80; }\n"}}, created)
    _create(cluster, core("secrets"), {
        "metadata": _meta("frontend-secret"), "type": "Opaque",
        "stringData": {"api-key": "not-a-real-key"}}, created)
    _create(cluster, core("secrets"), {
        "metadata": _meta("shop-tls"), "type": "kubernetes.io/tls",
        "stringData": {"tls.crt": "placeholder", "tls.key": "placeholder"}}, created)
    _create(cluster, core("serviceaccounts"), {"metadata": _meta("frontend")}, created)
    _create(cluster, apps("deployments"), _controller(
        "frontend", "frontend", "nginx:1.19", 2, {SIM + "log-lines": "25"},
        port=80, sa="frontend"), created)
    _create(cluster, apps("deployments"), _controller(
        "backend", "backend", "example/shop-backend:1.4", 2, port=8080), created)
    _create(cluster, apps("replicasets"), _controller(
        "legacy-cache", "legacy-cache", "redis:6-alpine", 1, port=6379), created)
    _create(cluster, core("replicationcontrollers"), {
        "metadata": _meta("legacy-worker", {"app": "legacy-worker"}),
        "spec": {"replicas": 1, "selector": {"app": "legacy-worker"},
                 "template": _template("legacy-worker", "busybox:1.32")}}, created)
    _create(cluster, core("services"), _service("frontend", "frontend", 80), created)
    _create(cluster, core("services"), _service("backend", "backend", 8080), created)
    _create(cluster, core("services"),
            _service("frontend-nodeport", "frontend", 80, kind="NodePort"), created)
    _create(cluster, core("services"), {
        "metadata": _meta("payments"),
        "spec": {"type": "ExternalName", "externalName": "payments.example.com"}}, created)
    _create(cluster, _ns(ns, "networking.k8s.io/v1", "ingresses"), {
        "metadata": _meta("shop"),
        "spec": {"ingressClassName": "demo-nginx",
                 "tls": [{"hosts": ["shop.example.com"], "secretName": "shop-tls"}],
                 "rules": [{"host": "shop.example.com", "http": {"paths": [
                     {"path": "/", "pathType": "Prefix", "backend": {
                         "service": {"name": "frontend", "port": {"number": 80}}}},
                     {"path": "/api", "pathType": "Prefix", "backend": {
                         "service": {"name": "backend", "port": {"number": 8080}}}},
                 ]}}]}}, created)
    _create(cluster, _ns(ns, "networking.k8s.io/v1", "networkpolicies"), {
        "metadata": _meta("backend-from-frontend"),
        "spec": {"podSelector": {"matchLabels": {"app": "backend"}},
                 "policyTypes": ["Ingress"],
                 "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "frontend"}}}],
                              "ports": [{"protocol": "TCP", "port": 8080}]}]}}, created)
    _create(cluster, _ns(ns, versions["pdb"], "poddisruptionbudgets"), {
        "metadata": _meta("frontend"),
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "frontend"}}}}, created)
    _create(cluster, _ns(ns, versions["hpa"], "horizontalpodautoscalers"),
            _hpa(versions["hpa"]), created)
    _create(cluster, _ns(ns, "rbac.authorization.k8s.io/v1", "roles"), {
        "metadata": _meta("pod-reader"),
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"],
                   "verbs": ["get", "list", "watch"]}]}, created)
    _create(cluster, _ns(ns, "rbac.authorization.k8s.io/v1", "rolebindings"), {
        "metadata": _meta("frontend-pod-reader"),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "pod-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "frontend", "namespace": ns}]}, created)
    _create(cluster, core("pods"), {
        "metadata": _meta("crasher", {"app": "crasher"}, {SIM + "crashloop": "app"}),
        "spec": _pod_spec("busybox:1.32")}, created)
    _create(cluster, core("pods"), {
        "metadata": _meta("logger", {"app": "logger"}, {SIM + "log-lines": "200"}),
        "spec": _pod_spec("alpine:3.12")}, created)


def _hpa(version):
    target = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "frontend"}
    spec = {"scaleTargetRef": target, "minReplicas": 2, "maxReplicas": 5}
    if version.endswith("/v1"):
        spec["targetCPUUtilizationPercentage"] = 70
    else:
        spec["metrics"] = [{"type": "Resource", "resource": {
            "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]
    return {"metadata": _meta("frontend"), "spec": spec}


def _data(cluster, created):
    ns = DATA
    core, apps = (lambda p: _ns(ns, "v1", p)), (lambda p: _ns(ns, "apps/v1", p))
    _create(cluster, core("configmaps"), {
        "metadata": _meta("db-config"), "data": {"max_connections": "100"}}, created)
    _create(cluster, core("secrets"), {
        "metadata": _meta("db-credentials"), "type": "Opaque",
        "stringData": {"username": "demo", "password": "not-a-real-password"}}, created)
    _create(cluster, core("persistentvolumeclaims"), {
        "metadata": _meta("reports"),
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "demo-manual",
                 "volumeName": "demo-pv-data",
                 "resources": {"requests": {"storage": "1Gi"}}}}, created)
    _create(cluster, core("services"), _service("db", "db", 5432, headless=True), created)
    sts = _controller("db", "db", "postgres:13", 2, port=5432)
    sts["spec"]["serviceName"] = "db"
    _create(cluster, apps("statefulsets"), sts, created)
    _create(cluster, apps("deployments"), _controller(
        "reporting", "reporting", "example/reporting:2.0",
        1, volumes=[{"name": "reports", "persistentVolumeClaim": {"claimName": "reports"}}],
        mounts=[{"name": "reports", "mountPath": "/reports"}]), created)
    agent = _template("log-agent", "fluent/fluent-bit:1.6")
    agent["spec"]["tolerations"] = [{"operator": "Exists"}]
    _create(cluster, apps("daemonsets"), {
        "metadata": _meta("log-agent", {"app": "log-agent"}),
        "spec": {"selector": {"matchLabels": {"app": "log-agent"}}, "template": agent}}, created)


def _job(completions, parallelism):
    return {"completions": completions, "parallelism": parallelism, "backoffLimit": 2,
            "template": {"metadata": {"labels": {"app": "report"}},
                         "spec": _pod_spec("busybox:1.32", restart="Never")}}


def _batch(cluster, created, versions):
    ns = BATCH
    _create(cluster, _ns(ns, "batch/v1", "jobs"),
            {"metadata": _meta("report-once"), "spec": _job(1, 1)}, created)
    _create(cluster, _ns(ns, "batch/v1", "jobs"),
            {"metadata": _meta("parallel-batch"), "spec": _job(3, 2)}, created)
    for name, schedule in (("nightly-report", "0 3 * * *"), ("ticker", "*/2 * * * *")):
        _create(cluster, _ns(ns, versions["cronjob"], "cronjobs"), {
            "metadata": _meta(name),
            "spec": {"schedule": schedule, "concurrencyPolicy": "Forbid",
                     "successfulJobsHistoryLimit": 2, "failedJobsHistoryLimit": 1,
                     "jobTemplate": {"spec": _job(1, 1)}}}, created)


def _custom_resources(cluster, created):
    plural = "widgets"
    path = _create(cluster, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        "metadata": _meta(f"{plural}.{CRD_GROUP}"),
        "spec": {
            "group": CRD_GROUP, "scope": "Namespaced",
            "names": {"plural": plural, "singular": "widget", "kind": "Widget",
                      "shortNames": ["wd"]},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {
                        "size": {"type": "integer"}, "color": {"type": "string"}}}}}},
                "additionalPrinterColumns": [
                    {"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
            }],
        }}, created)

    def established():
        status, crd = cluster.request("GET", path)
        return status == 200 and any(
            c["type"] == "Established" and c["status"] == "True"
            for c in (crd.get("status") or {}).get("conditions") or [])

    cluster.wait_for(established, timeout=30, what="the Widget CRD to be established")
    for name, size, color in (("small-red", 1, "red"), ("large-blue", 10, "blue")):
        _create(cluster, _ns(SHOP, f"{CRD_GROUP}/v1", plural), {
            "apiVersion": f"{CRD_GROUP}/v1", "kind": "Widget", "metadata": _meta(name),
            "spec": {"size": size, "color": color}}, created)


def _warning_events(cluster, created):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    targets = [
        ("v1", "Pod", "crasher", "BackOff", "Back-off restarting failed container", "kubelet"),
        ("apps/v1", "Deployment", "frontend", "FailedCreate",
         'Error creating: pods "frontend-x" is forbidden: exceeded quota', "deployment-controller"),
    ]
    for api_version, kind, name, reason, message, component in targets:
        status, obj = cluster.request("GET", f"{_ns(SHOP, api_version, kind.lower() + 's')}/{name}")
        if status != 200:
            raise SeedError(f"cannot read {kind} {name} for its event: {status}")
        _create(cluster, _ns(SHOP, "v1", "events"), {
            "metadata": _meta(f"{name}.demo-{reason.lower()}"),
            "involvedObject": {"apiVersion": api_version, "kind": kind, "namespace": SHOP,
                               "name": name, "uid": obj["metadata"]["uid"]},
            "reason": reason, "message": message, "type": "Warning", "count": 3,
            "firstTimestamp": now, "lastTimestamp": now,
            "source": {"component": component},
            "reportingComponent": component, "reportingInstance": component,
        }, created)


def _pods_running(cluster, ns, name, replicas):
    status, pods = cluster.request("GET", f"/api/v1/namespaces/{ns}/pods",
                                   params={"labelSelector": f"app={name}"})
    running = [p for p in pods.get("items", []) if p.get("status", {}).get("phase") == "Running"]
    return status == 200 and len(running) >= replicas


def seed(cluster, wait_timeout=90):
    """Create the sample objects; returns the API paths of everything seeded."""
    versions = {
        "cronjob": "batch/" + cluster.served_version("batch", "cronjobs", ["v1", "v1beta1"]),
        "pdb": "policy/" + cluster.served_version("policy", "poddisruptionbudgets",
                                                  ["v1", "v1beta1"]),
        "hpa": "autoscaling/" + cluster.served_version("autoscaling", "horizontalpodautoscalers",
                                                       ["v2", "v2beta2", "v1"]),
    }
    created = []
    _cluster_objects(cluster, created)
    for ns in NAMESPACES:
        cluster.wait_namespace_ready(ns)
    _shop(cluster, created, versions)
    _data(cluster, created)
    _batch(cluster, created, versions)
    _custom_resources(cluster, created)
    _warning_events(cluster, created)
    for ns, name, replicas in DEPLOYMENTS:
        cluster.wait_for(lambda: _pods_running(cluster, ns, name, replicas),
                         timeout=wait_timeout, interval=0.5,
                         what=f"{replicas} Running pod(s) of deployment {ns}/{name}")
    return created
