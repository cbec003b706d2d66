"""Waiting for the gateway's watch cache to catch up with writes made straight to the API
server (test set-ups, controllers), without sleeping.

A marker object of each kind named is created and deleted through the gateway, in a namespace
of its own. The gateway answers that DELETE once its cache has applied the marker's DELETED
event (read your own writes, dashboard_api/cache/applied.py), and a watch delivers the events of
one resource in the order they happened: every change of that kind made before the call is in
the cache when it returns. The pass-through gateway has no cache: nothing to wait for.
"""

_TEMPLATE = {"metadata": {"labels": {"barrier": "marker"}},
             "spec": {"containers": [{"name": "c", "image": "marker"}],
                      "nodeSelector": {"barrier": "no-such-node"}}}
_SELECTOR = {"matchLabels": {"barrier": "marker"}}

MARKERS = {
    "configmap": ("v1", "ConfigMap", {}),
    "pod": ("v1", "Pod", {"spec": _TEMPLATE["spec"]}),   # never scheduled: deleted at once
    "service": ("v1", "Service", {"spec": {"ports": [{"port": 80}]}}),
    "event": ("v1", "Event", {"involvedObject": {"kind": "Pod", "name": "marker"},
                              "reason": "Marker", "message": "cache barrier"}),  # + namespace
    "replicaset": ("apps/v1", "ReplicaSet", {"spec": {"replicas": 0, "selector": _SELECTOR,
                                                      "template": _TEMPLATE}}),
    "deployment": ("apps/v1", "Deployment", {"spec": {"replicas": 0, "selector": _SELECTOR,
                                                      "template": _TEMPLATE}}),
    "ingress": ("networking.k8s.io/v1", "Ingress", {"spec": {"defaultBackend": {
        "service": {"name": "marker", "port": {"number": 80}}}}}),
    "horizontalpodautoscaler": ("autoscaling/v1", "HorizontalPodAutoscaler", {"spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "marker"},
        "maxReplicas": 1}}),
}


def caught_up(gateway, token, namespace, *kinds):
    for kind in kinds:
        api_version, kind_name, fields = MARKERS[kind]
        path = "/api/v1/_raw/%s/namespace/%s/name/cache-barrier" % (kind, namespace)
        body = dict(fields, apiVersion=api_version, kind=kind_name,
                    metadata={"name": "cache-barrier", "namespace": namespace})
        if kind == "event":
            body["involvedObject"] = dict(body["involvedObject"], namespace=namespace)
        put = gateway.request("PUT", path, token=token, body=body)
        delete = gateway.request("DELETE", path, token=token, params={"propagation": "Background"})
        for method, reply in (("PUT", put), ("DELETE", delete)):
            assert reply.status == 204, (kind, method, reply)
            assert "Warning" not in reply.headers, (kind, method, reply.headers)
