"""Log sources: the pods of an object and the containers they run, for the log viewer to pick.

The answer carries the specification's ``logSources`` (one entry per pod with its containers)
and upstream's flat ``podNames`` / ``containerNames`` / ``initContainerNames``, which the
upstream web UI reads.
"""

from dashboard_api.summaries.selectors import to_query

# Owner kinds (rows of kinds.TABLE) -> where their pod template is; services have none.
TEMPLATE_PATHS = {
    "deployment": ("spec", "template"),
    "replicaset": ("spec", "template"),
    "statefulset": ("spec", "template"),
    "daemonset": ("spec", "template"),
    "job": ("spec", "template"),
    "cronjob": ("spec", "jobTemplate", "spec", "template"),
    "replicationcontroller": ("spec", "template"),
    "service": None,
}
RESOURCE_TYPES = ("pod",) + tuple(TEMPLATE_PATHS)


def dig(obj, path):
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def container_names(pod_spec):
    """(containers, init containers) of a pod spec, as name lists."""
    spec = pod_spec or {}
    return ([c["name"] for c in spec.get("containers") or []],
            [c["name"] for c in spec.get("initContainers") or []])


def template_spec(kind, owner):
    where = TEMPLATE_PATHS[kind]
    return dig(owner, where + ("spec",)) if where else None


def label_selector(selector):
    """A controller's selector as the ``labelSelector`` query; None when it selects nothing
    (an empty LabelSelector matches everything, but a controller never has one)."""
    return to_query(selector) or None


def controller_uid(obj):
    for ref in dig(obj, ("metadata", "ownerReferences")) or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


def controlled_by(objects, uids):
    """The objects whose controller is one of ``uids``."""
    return [o for o in objects if controller_uid(o) in uids]


def log_sources(pods, spec=None):
    """The answer for these pods; ``spec``: the owner's pod template spec, which names the
    containers even when no pod runs."""
    entries, names, init_names = [], [], []
    for pod in pods:
        containers, inits = container_names(pod.get("spec"))
        entries.append({"podName": pod["metadata"]["name"], "containerNames": containers,
                        "initContainerNames": inits})
        names += [n for n in containers if n not in names]
        init_names += [n for n in inits if n not in init_names]
    if spec is not None:
        names, init_names = container_names(spec)
    return {"logSources": entries, "podNames": [e["podName"] for e in entries],
            "containerNames": names, "initContainerNames": init_names}
