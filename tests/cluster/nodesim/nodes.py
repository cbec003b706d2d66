"""Registering a simulated node, keeping it Ready, and renewing its Lease."""

import hashlib
import logging
import platform
import time
import uuid

from .apiclient import MERGE_PATCH, ApiError
from .podstatus import HOST_IP, meta_time

log = logging.getLogger("nodesim.nodes")

KUBE_VERSION = "v1.20.2"
LEASE_SECONDS = 40
NOT_READY_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
TAINT_ATTEMPTS = 5
RESOURCES = {"cpu": "4", "memory": "8Gi", "pods": "110", "ephemeral-storage": "100Gi",
             "hugepages-1Gi": "0", "hugepages-2Mi": "0"}


def micro_time(ns):
    """metav1.MicroTime: RFC 3339 with microseconds."""
    secs, rest = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + ".%06dZ" % (rest // 1000)


def _condition(kind, status, reason, message, heartbeat, since):
    return {"type": kind, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": meta_time(heartbeat), "lastTransitionTime": meta_time(since)}


class NodeAgent:
    def __init__(self, api, name, index, kubelet_port):
        self.api = api
        self.name = name
        self.index = index
        self.kubelet_port = kubelet_port
        self.since = time.time_ns()
        self.boot_id = str(uuid.uuid4())
        self.uid = None

    def _status(self, now):
        conditions = [
            _condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                       "kubelet has sufficient memory available", now, self.since),
            _condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                       "kubelet has no disk pressure", now, self.since),
            _condition("PIDPressure", "False", "KubeletHasSufficientPID",
                       "kubelet has sufficient PID available", now, self.since),
            _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status",
                       now, self.since),
        ]
        digest = hashlib.md5(self.name.encode()).hexdigest()
        return {
            "capacity": dict(RESOURCES), "allocatable": dict(RESOURCES),
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": HOST_IP},
                          {"type": "Hostname", "address": self.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.kubelet_port}},
            "nodeInfo": {
                "machineID": digest, "systemUUID": str(uuid.UUID(digest)), "bootID": self.boot_id,
                "kernelVersion": platform.release(), "osImage": "Debian GNU/Linux 12 (bookworm)",
                "containerRuntimeVersion": "containerd://1.4.13", "kubeletVersion": KUBE_VERSION,
                "kubeProxyVersion": KUBE_VERSION, "operatingSystem": "linux",
                "architecture": "amd64",
            },
        }

    def _object(self):
        cidr = "10.244.%d.0/24" % self.index
        labels = {"kubernetes.io/hostname": self.name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                  "beta.kubernetes.io/arch": "amd64"}
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": self.name, "labels": labels, "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
                "spec": {"podCIDR": cidr, "podCIDRs": [cidr]},
                "status": self._status(time.time_ns())}

    async def register(self):
        try:
            node = await self.api.call("POST", "/api/v1/nodes", self._object())
        except ApiError as e:
            if e.code != 409:
                raise
            node = await self.api.call("GET", "/api/v1/nodes/" + self.name)
        self.uid = node["metadata"]["uid"]
        await self.heartbeat()

    async def heartbeat(self):
        """Node status (Ready, fresh heartbeat), the not-ready taint removed, Lease renewed."""
        node = await self.api.call("PATCH", "/api/v1/nodes/%s/status" % self.name,
                                   {"status": self._status(time.time_ns())},
                                   content_type=MERGE_PATCH)
        await self._untaint(node)
        await self._renew_lease()

    async def _untaint(self, node):
        """No node lifecycle controller runs, so the kubelet lifts the taint admission put on."""
        for _ in range(TAINT_ATTEMPTS):
            taints = node["spec"].get("taints") or []
            kept = [t for t in taints if t.get("key") not in NOT_READY_TAINTS]
            if len(kept) == len(taints):
                return
            patch = {"metadata": {"resourceVersion": node["metadata"]["resourceVersion"]},
                     "spec": {"taints": kept or None}}
            try:
                await self.api.call("PATCH", "/api/v1/nodes/" + self.name, patch,
                                    content_type=MERGE_PATCH)
                return
            except ApiError as e:
                if e.code != 409:
                    raise
            node = await self.api.call("GET", "/api/v1/nodes/" + self.name)
        log.warning("could not remove the not-ready taint of %s", self.name)

    async def _renew_lease(self):
        path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
        renew = micro_time(time.time_ns())
        try:
            await self.api.call("PATCH", path + "/" + self.name, {"spec": {"renewTime": renew}},
                                content_type=MERGE_PATCH)
            return
        except ApiError as e:
            if e.code != 404:
                raise
        lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                 "metadata": {"name": self.name, "namespace": "kube-node-lease",
                              "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                                                   "name": self.name, "uid": self.uid}]},
                 "spec": {"holderIdentity": self.name, "leaseDurationSeconds": LEASE_SECONDS,
                          "renewTime": renew}}
        await self.api.call("POST", path, lease)
