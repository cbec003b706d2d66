"""Small helpers of the log tests: pods made with the node simulator's annotations, their
log files read straight from the simulator's state directory."""

import os

from tests.cluster.nodesim.logs import log_path

SIM = "sim.dashboard.io/"


def create(cluster, path, body):
    status, reply = cluster.request("POST", path, body)
    assert status == 201, (path, status, reply)
    return reply


def pod_spec(containers=("app",), init=(), image="busybox"):
    # No token volume: a fresh namespace's service account may not have its token secret yet.
    spec = {"containers": [{"name": c, "image": image} for c in containers],
            "automountServiceAccountToken": False}
    if init:
        spec["initContainers"] = [{"name": c, "image": image} for c in init]
    return spec


def run_pod(cluster, namespace, name, containers=("app",), annotations=None, init=(),
            labels=None, owner=None):
    """Creates a pod and waits until all its containers have started."""
    meta = {"name": name, "annotations": {SIM + k: str(v) for k, v in (annotations or {}).items()}}
    if labels:
        meta["labels"] = labels
    if owner:
        meta["ownerReferences"] = [owner]
    create(cluster, "/api/v1/namespaces/%s/pods" % namespace,
           {"metadata": meta, "spec": pod_spec(containers, init)})
    return wait_pod(cluster, namespace, name, lambda pod: all(
        "running" in s.get("state", {}) or s.get("restartCount")
        for s in pod.get("status", {}).get("containerStatuses") or [{}]))


def wait_pod(cluster, namespace, name, predicate, timeout=40, what="pod to start"):
    def check():
        status, pod = cluster.request("GET", "/api/v1/namespaces/%s/pods/%s" % (namespace, name))
        return pod if status == 200 and predicate(pod) else None
    return cluster.wait_for(check, timeout=timeout, what="%s/%s: %s" % (namespace, name, what))


def restart_count(pod, container):
    for s in pod.get("status", {}).get("containerStatuses") or []:
        if s["name"] == container:
            return s.get("restartCount", 0)
    return 0


def log_file(cluster, namespace, pod, container, instance=0):
    """The raw log file of one container instance: lines '<timestamp> <text>'."""
    path = log_path(cluster.nodesim_state_dir, namespace, pod, container, instance)
    with open(path, "rb") as f:
        return f.read()


def file_lines(cluster, namespace, pod, container, instance=0):
    """[(timestamp, text)] of one container instance's log file."""
    data = log_file(cluster, namespace, pod, container, instance)
    return [tuple(line.split(" ", 1)) for line in data.decode().splitlines()]


def instances(cluster, namespace, pod, container):
    d = os.path.dirname(log_path(cluster.nodesim_state_dir, namespace, pod, container, 0))
    return sorted(int(n[:-4]) for n in os.listdir(d) if n.endswith(".log"))
