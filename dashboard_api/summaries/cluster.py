"""Namespaces and nodes (reference §5.4): items, details, allocated resources, sublists."""

from dashboard_api.query.reads import ALL, Api, Embed, Namespaces, Need, Sublist
from dashboard_api.summaries import quantity
from dashboard_api.summaries.common import (condition_status, conditions, name, object_meta,
                                            type_meta, uid)
from dashboard_api.summaries.quotas import limit_items, quota

QUOTAS = Api("", "resourcequotas")
LIMIT_RANGES = Api("", "limitranges")


def namespace(obj, rel):
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("namespace"),
            "phase": (obj.get("status") or {}).get("phase", "")}


def phase(obj):
    """A namespace's phase (Active, Terminating): what its list shows as its status."""
    return (obj.get("status") or {}).get("phase") or ""


def namespace_detail_needs(obj, rel):
    scope = Namespaces.one(name(obj))
    return [Need("quotas", QUOTAS, scope), Need("limitranges", LIMIT_RANGES, scope)]


def namespace_detail(obj, rel):
    out = namespace(obj, rel)
    quotas = [quota(q) for q in rel["quotas"]]
    out.update(resourceQuotaList={"listMeta": {"totalItems": len(quotas)}, "items": quotas},
               resourceLimits=[i for lr in rel["limitranges"] for i in limit_items(lr)],
               errors=[])
    return out


NAMESPACE_EVENTS = Sublist("event", "event", lambda obj: [
    Need("events", namespaces=Namespaces.one(name(obj)), critical=True)])


# --- nodes -----------------------------------------------------------------------------------

def _fraction(value, capacity):
    return value / capacity * 100 if capacity else 0


def allocated(node, pods):
    """Requests and limits of the node's running pods against its allocatable resources.

    ``pods``: the node's running pods; a read of them from the watch cache brings their count
    and sums kept per event (``totals()``, cache/summed.py), which a page reads instead of
    summing each pod's (issue #30)."""
    status = node.get("status") or {}
    allocatable = status.get("allocatable") or {}
    totals = getattr(pods, "totals", None)
    count, (requests, limits) = totals() if totals is not None else summed_resources(pods)
    cpu_capacity = quantity.milli(allocatable.get("cpu"))
    mem_capacity = quantity.whole(allocatable.get("memory"))
    pod_capacity = quantity.whole((status.get("capacity") or {}).get("pods"))
    cpu_req, cpu_lim = quantity.milli(requests.get("cpu", 0)), quantity.milli(limits.get("cpu", 0))
    mem_req, mem_lim = quantity.whole(requests.get("memory", 0)), quantity.whole(
        limits.get("memory", 0))
    return {"cpuRequests": cpu_req, "cpuRequestsFraction": _fraction(cpu_req, cpu_capacity),
            "cpuLimits": cpu_lim, "cpuLimitsFraction": _fraction(cpu_lim, cpu_capacity),
            "cpuCapacity": cpu_capacity,
            "memoryRequests": mem_req, "memoryRequestsFraction": _fraction(mem_req, mem_capacity),
            "memoryLimits": mem_lim, "memoryLimitsFraction": _fraction(mem_lim, mem_capacity),
            "memoryCapacity": mem_capacity,
            "allocatedPods": count, "podCapacity": pod_capacity,
            "podFraction": _fraction(count, pod_capacity)}


def pod_resources(pod):
    """(requests, limits) of one pod, each {resource: Fraction}: what a node's allocation
    sums."""
    return quantity.effective(pod.get("spec") or {})


def summed_resources(pods):
    """(pods, (requests, limits) summed resource by resource) of ``pods``."""
    sums = ({}, {})
    for pod in pods:
        for total, part in zip(sums, pod_resources(pod)):
            for res, value in part.items():
                total[res] = total.get(res, 0) + value
    return len(pods), sums


# The pods a node's allocation counts: those on it neither Succeeded nor Failed (the field
# selector of the node's pods read, after its spec.nodeName; cache/summed.py keeps their sums).
RUNNING_PODS = "status.phase!=Succeeded,status.phase!=Failed"


def _running_pods_fields(node_name):
    return "spec.nodeName=%s,%s" % (node_name, RUNNING_PODS)


def node_pods_needs(obj, critical=False):
    return [Need("pods@" + name(obj), "pod", ALL, fields=_running_pods_fields(name(obj)),
                 critical=critical)]


def node(obj, rel):
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("node"),
            "ready": condition_status(obj, "Ready"),
            "allocatedResources": allocated(obj, ()),
            "nodeInfo": (obj.get("status") or {}).get("nodeInfo") or {}}


_READY = {"True": "Ready", "False": "NotReady"}


def node_status(obj):
    """A node's status as kubectl shows it (a search's ``status:``): Ready, NotReady or
    Unknown by its Ready condition, and SchedulingDisabled when cordoned."""
    text = _READY.get(condition_status(obj, "Ready"), "Unknown")
    if (obj.get("spec") or {}).get("unschedulable"):
        text += " SchedulingDisabled"
    return text


def node_finish(item, obj, rel):
    item["allocatedResources"] = allocated(obj, rel["pods@" + name(obj)])


def node_detail_needs(obj, rel):
    return node_pods_needs(obj)


def node_detail(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    out = node(obj, rel)
    node_finish(out, obj, rel)
    out.update(phase=status.get("phase", ""), podCIDR=spec.get("podCIDR", ""),
               providerID=spec.get("providerID", ""),
               unschedulable=bool(spec.get("unschedulable")),
               conditions=conditions(status.get("conditions"), "lastHeartbeatTime"),
               containerImages=[n for image in status.get("images") or ()
                                for n in image.get("names") or ()],
               metrics=[], errors=[])
    if spec.get("taints"):
        out["taints"] = spec["taints"]
    if status.get("addresses"):
        out["addresses"] = status["addresses"]
    return out


def _node_events(obj, rel, arg):
    """Events about the node: kubelets use the node name as the UID, others the real UID."""
    by_name, by_uid = [], []
    for ev in rel["events"]:
        involved = ev.get("involvedObject") or {}
        if involved.get("namespace"):
            continue
        if involved.get("uid") == name(obj):
            by_name.append(ev)
        elif involved.get("uid") in (uid(obj), None, ""):
            by_uid.append(ev)
    return by_name + by_uid


NODE_PODS = Sublist("pod", "pod", lambda obj: node_pods_needs(obj, critical=True))
NODE_EVENTS = Sublist("event", "event", lambda obj: [Need(
    "events", namespaces=ALL, critical=True,
    fields="involvedObject.kind=Node,involvedObject.name=" + name(obj))], pick=_node_events)
NODE_EMBEDS = (Embed("podList", "pod", query=None), Embed("eventList", "event", query=None))
