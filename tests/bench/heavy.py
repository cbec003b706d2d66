"""Objects as heavy as a real cluster's, for the stand-in API server (issue #41).

Issue #30's stand-in served pods of ~5.5 KB without what every object of a real cluster carries
and the gateway must read past: ``metadata.managedFields`` (often as large as the spec), the
annotations controllers and meshes write, an init container and a mesh proxy beside the
application, and a full status (the init container's, both containers' with a last state).
Measured on such objects, start-up took twice the reference and pods alone went over 400 MiB
(issue #41). This module makes every kind of the stand-in that heavy by default
(``standin --light`` serves the issue-#30 shapes, for comparison):

- ``managed(kind)``: a ``managedFields`` list as the API server writes it, its FieldsV1 made from
  the fields the kind's objects really have (one list per kind: the managers write the same
  fields for every object of a template, only the time differs in a real cluster);
- ``POD``, ``CONTAINER``, ``PROXY``, ``STATUS``, ``INIT_STATUS``: a pod of a Deployment with a
  dozen environment variables, resources, probes and mounts, a mesh proxy sidecar and its init
  container, the annotations of a CNI and a mesh, and a full status.

``splice(text, fields)`` puts a managedFields list into an encoded object's metadata.
"""

import json

TIME = "2023-11-14T22:00:00Z"
PROXY_STATUS = ('{\\"initContainers\\":[\\"istio-init\\"],\\"containers\\":[\\"istio-proxy\\"],'
                '\\"volumes\\":[\\"istio-envoy\\",\\"istio-token\\"],\\"revision\\":\\"default\\"}')

# The application container: name, app, image minor, image patch, port x2, app, port x2.
CONTAINER = (
    '{"name":"%s","image":"registry.example.com/bench/%s:1.%d.%d","args":["--port=%d",'
    '"--config=/etc/config/app.yaml"],"ports":[{"name":"http","containerPort":%d,'
    '"protocol":"TCP"}],'
    '"env":[{"name":"APP","value":"%s"},{"name":"ENV","value":"prod"},'
    '{"name":"LOG_FORMAT","value":"json"},{"name":"LOG_LEVEL","value":"info"},'
    '{"name":"TIMEOUT","value":"30s"},{"name":"DB_HOST","value":"db.example.com"},'
    '{"name":"DB_POOL","value":"20"},{"name":"CACHE_TTL","value":"300s"},'
    '{"name":"OTEL_ENDPOINT","value":"http://otel.observability:4317"},'
    '{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},'
    '{"name":"POD_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},'
    '{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"db","key":"password"}}}],'
    '"resources":{"limits":{"cpu":"1","memory":"512Mi"},'
    '"requests":{"cpu":"250m","memory":"256Mi"}},'
    '"volumeMounts":[{"name":"config","mountPath":"/etc/config","readOnly":true}],'
    '"livenessProbe":{"httpGet":{"path":"/healthz","port":%d},"periodSeconds":10},'
    '"readinessProbe":{"httpGet":{"path":"/ready","port":%d},"periodSeconds":5},'
    '"terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"}')

PROXY = (
    '{"name":"istio-proxy","image":"registry.example.com/istio/proxyv2:1.19.3",'
    '"args":["proxy","sidecar","--proxyLogLevel=warning"],"ports":[{"name":"http-envoy-prom",'
    '"containerPort":15090,"protocol":"TCP"}],"env":[{"name":"CA_ADDR","value":'
    '"istiod.istio-system.svc:15012"},{"name":"POD_NAME","valueFrom":{"fieldRef":'
    '{"fieldPath":"metadata.name"}}}],"resources":{"limits":{"cpu":"2","memory":"1Gi"},'
    '"requests":{"cpu":"100m","memory":"128Mi"}},"volumeMounts":[{"name":"istio-envoy",'
    '"mountPath":"/etc/istio/proxy"}],"imagePullPolicy":"IfNotPresent"}')

INIT = (
    '{"name":"istio-init","image":"registry.example.com/istio/proxyv2:1.19.3","args":'
    '["istio-iptables","-p","15001","-u","1337"],"resources":{"requests":{"cpu":"10m",'
    '"memory":"40Mi"}},"imagePullPolicy":"IfNotPresent"}')

# A pod: name, namespace, uid, resourceVersion, creation, generateName, app, app (version
# label), tier, hash, team, app x2 (canonical name, part-of), config checksum, pod IP x2
# (CNI annotations), replica set, its uid, managedFields, app (config map), init container,
# application container, proxy, node, then the status: phase, conditions (creation x2, ready x2,
# ready x2, creation), host IP (2), pod IP x2, start, init status, container statuses x2.
POD = (
    '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s","uid":"%s",'
    '"resourceVersion":"%d","creationTimestamp":"%s","generateName":"%s-",'
    '"labels":{"app":"%s","version":"v1","tier":"%s","pod-template-hash":"%s",'
    '"team":"team-%d","security.istio.io/tlsMode":"istio",'
    '"service.istio.io/canonical-name":"%s","service.istio.io/canonical-revision":"v1",'
    '"app.kubernetes.io/name":"%s","app.kubernetes.io/part-of":"bench",'
    '"app.kubernetes.io/managed-by":"standin"},'
    '"annotations":{"checksum/config":"%064x","cni.projectcalico.org/podIP":"%s/32",'
    '"cni.projectcalico.org/podIPs":"%s/32","kubectl.kubernetes.io/default-container":"main",'
    '"kubernetes.io/psp":"restricted","prometheus.io/scrape":"true","prometheus.io/port":"9091",'
    '"sidecar.istio.io/status":"' + PROXY_STATUS + '"},'
    '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%s","uid":"%s",'
    '"controller":true,"blockOwnerDeletion":true}],"managedFields":%s},'
    '"spec":{"volumes":[{"name":"istio-envoy","emptyDir":{"medium":"Memory"}},'
    '{"name":"config","configMap":{"name":"%s-config","defaultMode":420}},'
    '{"name":"kube-api-access","projected":{"sources":[{"serviceAccountToken":'
    '{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt",'
    '"items":[{"key":"ca.crt","path":"ca.crt"}]}}],"defaultMode":420}}],'
    '"initContainers":[%s],"containers":[%s,%s],'
    '"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",'
    '"serviceAccountName":"default","serviceAccount":"default","nodeName":"%s",'
    '"securityContext":{"runAsNonRoot":true,"fsGroup":2000,"seccompProfile":'
    '{"type":"RuntimeDefault"}},"schedulerName":"default-scheduler",'
    '"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists",'
    '"effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable",'
    '"operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,'
    '"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},'
    '"status":{"phase":"Running","conditions":['
    '{"type":"Initialized","status":"True","lastProbeTime":null,'
    '"lastTransitionTime":"%s"},'
    '{"type":"Ready","status":"%s","lastProbeTime":null,"lastTransitionTime":"%s"},'
    '{"type":"ContainersReady","status":"%s","lastProbeTime":null,'
    '"lastTransitionTime":"%s"},'
    '{"type":"PodScheduled","status":"True","lastProbeTime":null,'
    '"lastTransitionTime":"%s"}],'
    '"hostIP":"10.0.%d.%d","podIP":"%s","podIPs":[{"ip":"%s"}],"startTime":"%s",'
    '"initContainerStatuses":[%s],"containerStatuses":[%s,%s],"qosClass":"Burstable"}}')

# A container's status: name, state, last state, ready, restarts, image (repository, minor,
# patch), image ID repository and digest, container ID, started.
STATUS = (
    '{"name":"%s","state":%s,"lastState":%s,"ready":%s,"restartCount":%d,'
    '"image":"registry.example.com/%s:1.%d.%d","imageID":"registry.example.com/%s@sha256:%064x",'
    '"containerID":"containerd://%064x","started":%s}')
INIT_STATUS = (
    '{"name":"istio-init","state":{"terminated":{"exitCode":0,"reason":"Completed",'
    '"startedAt":"%s","finishedAt":"%s","containerID":"containerd://%064x"}},"lastState":{},'
    '"ready":true,"restartCount":0,"image":"registry.example.com/istio/proxyv2:1.19.3",'
    '"imageID":"registry.example.com/istio/proxyv2@sha256:%064x",'
    '"containerID":"containerd://%064x"}')
LAST_TERMINATED = ('{"terminated":{"exitCode":1,"reason":"Error","startedAt":"%s",'
                   '"finishedAt":"%s","containerID":"containerd://%064x"}}')

# A replica set's pod template (heavy): app x2, tier, hash, team, app x2, checksum, config map's
# app, init container, application container, proxy.
TEMPLATE = (
    '{"metadata":{"creationTimestamp":null,"labels":{"app":"%s","version":"v1","tier":"%s",'
    '"pod-template-hash":"%s","team":"team-%d","app.kubernetes.io/name":"%s",'
    '"app.kubernetes.io/part-of":"bench","app.kubernetes.io/managed-by":"standin"},'
    '"annotations":{"checksum/config":"%064x","kubectl.kubernetes.io/default-container":"main",'
    '"kubernetes.io/psp":"restricted","prometheus.io/scrape":"true",'
    '"prometheus.io/port":"9091"}},'
    '"spec":{"volumes":[{"name":"config","configMap":{"name":"%s-config","defaultMode":420}}],'
    '"initContainers":[%s],"containers":[%s,%s],"restartPolicy":"Always",'
    '"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":'
    '"default","securityContext":{"runAsNonRoot":true,"fsGroup":2000},"schedulerName":'
    '"default-scheduler"}}')


def fields_v1(value, depth=3):
    """The FieldsV1 set of ``value`` as server-side apply writes it: ``f:<field>`` for each
    field of an object, ``k:{key}`` for list items keyed by name (or type, ip), ``.`` for the
    object itself where it is one; ``depth`` levels deep (a real one goes to every leaf: a
    whole pod spec's is ~5 KB, more than the issue's ~5 KB pods hold in all)."""
    if depth == 0:
        return {}
    if isinstance(value, dict):
        out = {".": {}} if value else {}
        for key, sub in value.items():
            out["f:" + key] = fields_v1(sub, depth - 1)
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        out = {".": {}}
        for item in value:
            for key in ("name", "type", "ip", "key"):
                if key in item:
                    out["k:" + json.dumps({key: item[key]}, separators=(",", ":"))] = \
                        fields_v1(item, depth - 1)
                    break
        return out if len(out) > 1 else {}
    return {}


def _entry(manager, api_version, fields, subresource=None):
    entry = {"manager": manager, "operation": "Update", "apiVersion": api_version,
             "time": TIME, "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def managed_fields(obj, writers, depth=3):
    """A managedFields list of ``obj`` (a decoded object): ``writers`` [(manager, top-level
    fields it owns, subresource or None)], each field's FieldsV1 ``depth`` levels deep;
    metadata.managedFields itself is never listed."""
    api_version = obj.get("apiVersion", "v1")
    out = []
    for manager, owned, subresource in writers:
        fields = {}
        for name in owned:
            if name == "metadata":
                meta = {k: v for k, v in (obj.get("metadata") or {}).items()
                        if k in ("labels", "annotations", "ownerReferences", "generateName")}
                fields["f:metadata"] = fields_v1(meta, depth)
            elif name in obj:
                fields["f:" + name] = fields_v1(obj[name], depth)
        out.append(_entry(manager, api_version, fields, subresource))
    return json.dumps(out, separators=(",", ":"))


WRITERS = {
    "pod": [("kube-controller-manager", ("metadata", "spec"), None),
            ("kubelet", ("status",), "status")],
    "replicaset": [("kube-controller-manager", ("metadata", "spec"), None),
                   ("kube-controller-manager", ("status",), "status")],
    "node": [("kubeadm", ("metadata",), None),
             ("kube-controller-manager", ("spec",), None),
             ("kubelet", ("status",), "status")],
    "event": [("kubelet", ("involvedObject", "reason", "message", "source", "firstTimestamp",
                           "lastTimestamp", "count", "type"), None)],
    "service": [("helm", ("metadata", "spec"), None)],
    "endpointslice": [("kube-controller-manager", ("metadata", "addressType", "endpoints",
                                                   "ports"), None)],
    "configmap": [("helm", ("metadata", "data"), None)],
}


def splice(text, fields):
    """``text`` (an encoded object) with ``"managedFields":fields`` first in its metadata."""
    return text.replace('"metadata":{', '"metadata":{"managedFields":%s,' % fields, 1)
