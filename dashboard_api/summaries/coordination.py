"""Leases (coordination.k8s.io): node heartbeats (namespace ``kube-node-lease``, one per node,
renewed every 10 seconds by each kubelet) and leader elections of controllers."""
from dashboard_api.query import properties
from dashboard_api.query.properties import Property
from dashboard_api.summaries.common import object_meta, type_meta

PROPERTIES = properties.properties(holderIdentity=Property(lambda i: i["holderIdentity"]),
                                   renewTime=Property(lambda i: i["renewTime"], time=True))


def lease(obj, rel):
    """The list item and the detail: who holds the lease, since when, until when (renewTime
    plus leaseDurationSeconds) and how often it changed hands."""
    spec = obj.get("spec") or {}
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("lease"),
            "holderIdentity": spec.get("holderIdentity", ""),
            "leaseDurationSeconds": spec.get("leaseDurationSeconds"),
            "acquireTime": spec.get("acquireTime"), "renewTime": spec.get("renewTime"),
            "leaseTransitions": spec.get("leaseTransitions", 0)}
