"""Log sources: the pods of an object and the containers they run, for the log viewer to pick.

The answer carries the specification's ``logSources`` (one entry per pod with its containers)
and upstream's flat ``podNames`` / ``containerNames`` / ``initContainerNames``, which the
upstream web UI reads.
"""

# resource type -> (API group, plural, versions best first, where the pod template is).
OWNER_KINDS = {
    "deployment": ("apps", "deployments", ("v1",), ("spec", "template")),
    "replicaset": ("apps", "replicasets", ("v1",), ("spec", "template")),
    "statefulset": ("apps", "statefulsets", ("v1",), ("spec", "template")),
    "daemonset": ("apps", "daemonsets", ("v1",), ("spec", "template")),
    "job": ("batch", "jobs", ("v1",), ("spec", "template")),
    "cronjob": ("batch", "cronjobs", ("v1", "v1beta1"),
                ("spec", "jobTemplate", "spec", "template")),
    "replicationcontroller": ("", "replicationcontrollers", ("v1",), ("spec", "template")),
    "service": ("", "services", ("v1",), None),
}
RESOURCE_TYPES = ("pod",) + tuple(OWNER_KINDS)


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
    where = OWNER_KINDS[kind][3]
    return dig(owner, where + ("spec",)) if where else None


def label_selector(selector):
    """A selector (a LabelSelector, or the plain map of services and replication controllers)
    as the ``labelSelector`` query string; None when it selects nothing."""
    if not selector:
        return None
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return ",".join("%s=%s" % kv for kv in sorted(selector.items()))
    terms = ["%s=%s" % kv for kv in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        if op == "In":
            terms.append("%s in (%s)" % (key, ",".join(values)))
        elif op == "NotIn":
            terms.append("%s notin (%s)" % (key, ",".join(values)))
        elif op == "Exists":
            terms.append(key)
        elif op == "DoesNotExist":
            terms.append("!" + key)
    # An empty LabelSelector matches everything; a controller never has one, so match nothing.
    return ",".join(terms) or None


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
