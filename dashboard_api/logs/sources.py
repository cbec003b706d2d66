"""Log sources: the pods of an object and the containers they run, for the log viewer to pick.

The answer carries the specification's ``logSources`` (one entry per pod with its containers)
and upstream's flat ``podNames`` / ``containerNames`` / ``initContainerNames``, which the
upstream web UI reads. The pods are read through ``lists.fetch.Fetch`` (``pod_needs``) and matched
to their owner by the workload summaries' helpers (``pods_of``).
"""

from dashboard_api.query.reads import Need, scope_of
from dashboard_api.summaries.common import uid
from dashboard_api.summaries.labelselector import to_query
from dashboard_api.summaries.workloads.items import deployment_pods, owned_pods

# Owner kinds (rows of kinds.TABLE); all but services have a pod template.
OWNER_KINDS = ("deployment", "replicaset", "statefulset", "daemonset", "job", "cronjob",
               "replicationcontroller", "service")
RESOURCE_TYPES = ("pod",) + OWNER_KINDS


def container_names(pod_spec):
    """(containers, init containers) of a pod spec, as name lists."""
    spec = pod_spec or {}
    return ([c["name"] for c in spec.get("containers") or []],
            [c["name"] for c in spec.get("initContainers") or []])


def template_spec(kind, owner):
    """The owner's pod template spec (a cron job's is in its job template); None for services."""
    if kind == "service":
        return None
    spec = owner.get("spec") or {}
    if kind == "cronjob":
        spec = (spec.get("jobTemplate") or {}).get("spec") or {}
    return (spec.get("template") or {}).get("spec")


def pod_needs(kind, owner):
    """The reads that find the owner's pods; critical, since they are the answer."""
    scope = scope_of(owner)
    if kind == "cronjob":
        # A cron job's jobs share no label with it: they are matched by controller.
        return [Need("jobs", namespaces=scope, critical=True),
                Need("pods", namespaces=scope, critical=True)]
    selector = to_query((owner.get("spec") or {}).get("selector"))
    if not selector:
        return []  # selects nothing; an empty labelSelector would list every pod
    needs = [Need("pods", namespaces=scope, labels=selector, critical=True)]
    if kind == "deployment":
        needs.append(Need("replicasets", namespaces=scope, labels=selector, critical=True))
    return needs


def pods_of(kind, owner, rel):
    """The owner's pods among those ``pod_needs`` read: a service's are all it selects; a
    controller's are those it controls (a deployment's through its replica sets, a cron job's
    through its jobs), so a same-labelled pod of another owner is left out."""
    if kind == "service":
        return rel["pods"]
    if kind == "deployment":
        return deployment_pods(owner, rel)
    if kind == "cronjob":
        return [pod for job in rel.by_controller("jobs").get(uid(owner), ())
                for pod in owned_pods(job, rel)]
    return owned_pods(owner, rel)


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
