"""Pods (reference §5.1): list item, list status, detail with resolved env, and sublists."""

import math
import re

from dashboard_api.query import properties
from dashboard_api.query.properties import Property
from dashboard_api.query.reads import Api, Embed, Need, Sublist, scope_of
from dashboard_api.summaries import quantity
from dashboard_api.summaries.common import (conditions, container_images, controller_ref,
                                            object_meta, resource_status, spec_images,
                                            type_meta)
from dashboard_api.summaries.events import event_type, pod_ready, warnings
from dashboard_api.summaries.labelselector import to_query
from dashboard_api.summaries.podstatus import list_phase, pod_status, restart_count
from dashboard_api.summaries.workloads import items as workloads

PROPERTIES = properties.properties(status=Property(lambda p: p["status"], few=True))

CONFIGMAPS = Api("", "configmaps")
SECRETS = Api("", "secrets")
OWNER_KINDS = {"ReplicaSet": "replicaset", "ReplicationController": "replicationcontroller",
               "DaemonSet": "daemonset", "StatefulSet": "statefulset", "Job": "job"}


def container_state(status):
    state = (status or {}).get("state") or {}
    if state.get("waiting") is not None:
        return "Waiting"
    if state.get("terminated") is not None:
        return "Failed" if state["terminated"].get("exitCode", 0) > 0 else "Terminated"
    if state.get("running") is not None:
        return "Running"
    return "Unknown"


def allocated_resources(spec):
    """A pod's requests and limits as the list shows them (millicores, bytes, GPUs): the same
    for every pod of a template, so made once a template (Fraction arithmetic is slow)."""
    return dict(quantity.by_parts(_ALLOCATED, spec, _allocated))


_ALLOCATED = {}


def _allocated(spec):
    requests, limits = quantity.effective(spec)
    return {"cpuRequests": math.ceil(requests.get("cpu", 0) * 1000),
            "cpuLimits": math.ceil(limits.get("cpu", 0) * 1000),
            "memoryRequests": math.ceil(requests.get("memory", 0)),
            "memoryLimits": math.ceil(limits.get("memory", 0)),
            "gpuRequests": quantity.gpus(requests), "gpuLimits": quantity.gpus(limits)}


def item(pod, rel):
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    statuses = (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or [])
    return {
        "objectMeta": object_meta(pod),
        "typeMeta": type_meta("pod"),
        "status": pod_status(pod),
        "restartCount": restart_count(pod),
        "metrics": None,
        "warnings": warnings((pod,), rel),
        "nodeName": spec.get("nodeName", ""),
        "containerImages": container_images(spec),
        "containerStatuses": [{"name": cs.get("name", ""), "state": container_state(cs),
                               "ready": bool(cs.get("ready"))} for cs in statuses],
        "allocatedResources": allocated_resources(spec),
    }


def status_facts(pod):
    """What the list status needs of one pod alone: its bucket without and with warnings,
    whether it is ready (a ready pod has no warnings) and, when a Warning event would move it
    (not ready, its bucket differs with one), its UID. The watch cache computes this once per
    change of the pod, not on every request. Without a UID the facts are one of a few shared
    tuples (most pods: 72 bytes each saved in the cache)."""
    plain, warned, ready = list_phase(pod, False), list_phase(pod, True), pod_ready(pod)
    if warned != plain and not ready:
        return plain, warned, ready, (pod.get("metadata") or {}).get("uid")
    facts = (plain, warned, ready, None)
    return _FACTS.setdefault(facts, facts)


_FACTS = {}   # the facts without a UID: buckets and readiness, a few dozen at most


# The bucket of a pod a Warning event moves: list_phase(pod, True) of a pod not ready (status_split
# keeps only those whose bucket differs).
WARNED = "failed"


def status_split(facts):
    """(the pod's list-status bucket from its facts alone, its UID when a Warning event would
    make it ``failed`` instead, else None): the watch cache counts buckets per event and keeps
    the facts of the pods that events could move (status_counted)."""
    plain, warned, ready, uid = facts
    return plain, (uid if warned != plain and not ready else None)


def status_counted(counts, pending, rel):
    """list_status from the watch cache's counters: ``counts`` the buckets of every pod from
    its facts alone, ``pending`` {namespace: {bucket: {uid: facts}}} of the pods a Warning
    event would move, by their bucket without one (a not-ready pod with a Warning is
    ``failed``, whatever that bucket: list_phase). How many of a bucket have a Warning event:
    from a cached event list, the watch cache's count of them kept per event (the join
    "warned_moves" of the pods not ready with the objects warned: O(namespaces) here, issue
    #30); else one intersection per bucket with the set of the warned objects, in C,
    O(min(pods pending, objects with Warning events)) set lookups. Never a pod's events read:
    the same answer as list_status over every pod's facts."""
    out = resource_status()
    for bucket, n in counts.items():
        out[bucket] += n
    moves = rel.warned_moves()
    warned_uids = rel.warned_objects() if moves is None else None
    for namespace, part in pending.items():
        for plain, group in part.items():
            moved = moves.count((namespace, plain)) if moves is not None else \
                len(group.keys() & warned_uids)
            if moved:
                if plain:
                    out[plain] -= moved
                out[WARNED] += moved
    return out


def images(pod):
    """The pod's container images (a search's ``image:``)."""
    return spec_images(pod.get("spec"))


def node_name(pod):
    """The node the pod is bound to (a search's ``node:``)."""
    return (pod.get("spec") or {}).get("nodeName")


def key_item(pod):
    """The parts of a pod's list item that its sort and filter properties read (the watch
    cache computes keys from it: the whole item costs five times as much)."""
    return {"objectMeta": object_meta(pod), "status": pod_status(pod)}


def list_status(raw, rel, facts=None):
    """Pods by list phase; a pod with warnings (not ready, with Warning events) is failed."""
    out = resource_status()
    by_object = rel.events_by_object()
    for plain, warned, ready, uid in facts if facts is not None else map(status_facts, raw):
        bucket = plain
        if warned != plain and not ready and uid in by_object and any(
                event_type(ev) == "Warning" for ev in by_object.get(uid, ())):
            bucket = warned
        if bucket:
            out[bucket] += 1
    return out


# --- detail ----------------------------------------------------------------------------------

def _env_sources(spec):
    """Names of the config maps and secrets the containers' env reads."""
    maps, secrets = set(), set()
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for env in c.get("env") or ():
            source = env.get("valueFrom") or {}
            if source.get("configMapKeyRef"):
                maps.add(source["configMapKeyRef"].get("name", ""))
            if source.get("secretKeyRef"):
                secrets.add(source["secretKeyRef"].get("name", ""))
        for env_from in c.get("envFrom") or ():
            if env_from.get("configMapRef"):
                maps.add(env_from["configMapRef"].get("name", ""))
            if env_from.get("secretRef"):
                secrets.add(env_from["secretRef"].get("name", ""))
    return maps, secrets


def detail_needs(pod, rel):
    scope = scope_of(pod)
    maps, secrets = _env_sources(pod.get("spec") or {})
    needs = [Need("configmap:" + n, CONFIGMAPS, scope, name=n) for n in sorted(maps)]
    needs += [Need("secret:" + n, SECRETS, scope, name=n) for n in sorted(secrets)]
    ref = controller_ref(pod)
    if ref and ref.get("kind") in OWNER_KINDS:
        needs.append(Need("owner", OWNER_KINDS[ref["kind"]], scope, name=ref.get("name")))
        owner = rel.get("owner")
        if owner:
            selector = (owner.get("spec") or {}).get("selector") or {}
            needs += [Need("pods", namespaces=scope, labels=to_query(selector)),
                      Need("events", namespaces=scope)]
    return needs


_SUBSCRIPT = re.compile(r"^metadata\.(labels|annotations)\['(.*)'\]$")


def _field_value(pod, path):
    """A fieldRef: whole label/annotation maps as key="value" lines, one entry by subscript,
    or the scalar at a dotted path (upstream knew only name, namespace, labels, annotations)."""
    meta = pod.get("metadata") or {}
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join('%s="%s"' % kv for kv in sorted(values.items()))
    m = _SUBSCRIPT.match(path)
    if m:
        return (meta.get(m.group(1)) or {}).get(m.group(2), "")
    value = pod
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if path == "status.podIPs" and isinstance(value, list):
        return ",".join(ip.get("ip", "") for ip in value)
    return value if isinstance(value, str) else ""


def _resource_value(pod, container, ref):
    """A resourceFieldRef: the quantity divided by the divisor, rounded up."""
    target = container
    if ref.get("containerName"):
        target = next((c for c in (pod.get("spec") or {}).get("containers") or ()
                       if c.get("name") == ref["containerName"]), container)
    section, _, resource = (ref.get("resource") or "").partition(".")
    if section not in ("limits", "requests") or resource not in ("cpu", "memory"):
        return ""
    value = quantity.parse(((target.get("resources") or {}).get(section) or {}).get(resource))
    if section == "limits" and value == 0:
        return "node allocatable"
    divisor = quantity.parse(ref.get("divisor") or "1") or 1
    return str(math.ceil(value / divisor))


def _env_value(pod, container, source, rel):
    if source.get("configMapKeyRef"):
        ref = source["configMapKeyRef"]
        found = rel.get("configmap:" + ref.get("name", "")) or {}
        return (found.get("data") or {}).get(ref.get("key", ""), "")
    if source.get("secretKeyRef"):
        ref = source["secretKeyRef"]
        found = rel.get("secret:" + ref.get("name", "")) or {}
        return (found.get("data") or {}).get(ref.get("key", ""), "")  # base64, as stored
    if source.get("resourceFieldRef"):
        return _resource_value(pod, container, source["resourceFieldRef"])
    if source.get("fieldRef"):
        return _field_value(pod, source["fieldRef"].get("fieldPath", ""))
    return ""


def env(pod, container, rel):
    """The container's environment with values resolved, ``env`` first then ``envFrom``."""
    out = []
    for e in container.get("env") or ():
        source = e.get("valueFrom")
        value = _env_value(pod, container, source, rel) if source else e.get("value", "")
        out.append({"name": e.get("name", ""), "value": value, "valueFrom": source})
    for env_from in container.get("envFrom") or ():
        prefix = env_from.get("prefix", "")
        for ref_key, ref_type in (("configMapRef", "configMap"), ("secretRef", "secret")):
            ref = env_from.get(ref_key)
            if not ref:
                continue
            found = rel.get("%s:%s" % (ref_type.lower(), ref.get("name", ""))) or {}
            for key, value in sorted((found.get("data") or {}).items()):
                out.append({"name": prefix + key, "value": value,
                            "valueFrom": {ref_type + "KeyRef": {"name": ref.get("name", ""),
                                                                "key": key}}})
    return out


def _container(pod, c, statuses, volumes, rel):
    status = statuses.get(c.get("name"))
    mounts = [{"name": m.get("name", ""), "readOnly": bool(m.get("readOnly")),
               "mountPath": m.get("mountPath", ""), "subPath": m.get("subPath", ""),
               "volume": volumes.get(m.get("name"), {"name": ""})}
              for m in c.get("volumeMounts") or ()]
    return {"name": c.get("name", ""), "image": c.get("image", ""), "env": env(pod, c, rel),
            "commands": c.get("command"), "args": c.get("args"), "volumeMounts": mounts,
            "securityContext": c.get("securityContext"), "status": status,
            "state": container_state(status),
            "livenessProbe": c.get("livenessProbe"), "readinessProbe": c.get("readinessProbe"),
            "startupProbe": c.get("startupProbe"), "resources": c.get("resources") or {}}


def detail(pod, rel):
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or ()}
    regular = {cs.get("name"): cs for cs in status.get("containerStatuses") or ()}
    init = {cs.get("name"): cs for cs in status.get("initContainerStatuses") or ()}
    out = {
        "objectMeta": object_meta(pod),
        "typeMeta": type_meta("pod"),
        "podPhase": pod_status(pod),
        "podIP": status.get("podIP", ""),
        "nodeName": spec.get("nodeName", ""),
        "serviceAccountName": spec.get("serviceAccountName", ""),
        "restartCount": restart_count(pod),
        "qosClass": status.get("qosClass", ""),
        "containers": [_container(pod, c, regular, volumes, rel)
                       for c in spec.get("containers") or ()],
        "initContainers": [_container(pod, c, init, volumes, rel)
                           for c in spec.get("initContainers") or ()],
        "metrics": [],
        "conditions": conditions(status.get("conditions")) or None,
        "securityContext": spec.get("securityContext"),
        "errors": [],
    }
    if spec.get("imagePullSecrets"):
        out["imagePullSecrets"] = spec["imagePullSecrets"]
    ref = controller_ref(pod)
    if ref and rel.get("owner"):
        out["controller"] = workloads.owner_info(OWNER_KINDS[ref["kind"]], rel["owner"], rel)
    return out


# --- sublists --------------------------------------------------------------------------------

CONTAINERS = Sublist(
    "container", "pod", lambda pod: [],
    respond=lambda pod, rel, arg: {"containers": [c.get("name", "") for c in
                                                  (pod.get("spec") or {}).get("containers") or ()]})


def _claim_names(pod):
    return {(v.get("persistentVolumeClaim") or {}).get("claimName")
            for v in (pod.get("spec") or {}).get("volumes") or () if v.get("persistentVolumeClaim")}


CLAIMS = Sublist(
    "persistentvolumeclaim", "persistentvolumeclaim",
    lambda pod: [Need("claims", "persistentvolumeclaim", scope_of(pod), critical=True)]
    if _claim_names(pod) else [],
    pick=lambda pod, rel, arg: [c for c in rel["claims"]
                                if (c.get("metadata") or {}).get("name") in _claim_names(pod)])

EMBEDS = (Embed("eventList", "event"), Embed("persistentVolumeClaimList", "persistentvolumeclaim"))

