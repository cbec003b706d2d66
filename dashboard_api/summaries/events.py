"""Events (reference §3 Event, §7): the list item, the derived type, and pod warnings."""
from dashboard_api.query import properties
from dashboard_api.query.properties import Property
from dashboard_api.query.reads import Need, Sublist, scope_of
from dashboard_api.summaries.common import object_meta

_WARNING_PARTS = ("failed", "err", "exceeded", "invalid", "unhealthy", "mismatch",
                  "insufficient", "conflict", "outof", "nil", "backoff")

PROPERTIES = properties.properties(
    firstSeen=Property(lambda e: e["firstSeen"], time=True),
    lastSeen=Property(lambda e: e["lastSeen"], time=True),
    reason=Property(lambda e: e["reason"], few=True),
)


def event_type(ev):
    """The event's type, or one derived from its reason when the event has none."""
    if ev.get("type"):
        return ev["type"]
    reason = (ev.get("reason") or "").lower()
    return "Warning" if any(p in reason for p in _WARNING_PARTS) else "Normal"


def event(ev, rel=None):
    involved = ev.get("involvedObject") or {}
    source = ev.get("source") or {}
    first = ev.get("firstTimestamp") or ev.get("eventTime")
    item = {
        "objectMeta": object_meta(ev),
        "typeMeta": {"kind": "event"},
        "message": ev.get("message", ""),
        "sourceComponent": source.get("component", ""),
        "sourceHost": source.get("host", ""),
        "object": involved.get("fieldPath", ""),
        "count": ev.get("count", 0),
        "firstSeen": first,
        "lastSeen": ev.get("lastTimestamp") or first,
        "reason": ev.get("reason", ""),
        "type": event_type(ev),
    }
    for src, dst in (("kind", "objectKind"), ("name", "objectName"),
                     ("namespace", "objectNamespace")):
        if involved.get(src):
            item[dst] = involved[src]
    return item


def pod_ready(pod):
    """Ready in the warnings sense: Succeeded, or Running without a Ready=False condition."""
    status = pod.get("status") or {}
    phase = status.get("phase")
    if phase == "Succeeded":
        return True
    if phase != "Running":
        return False
    return not any(c.get("type") == "Ready" and c.get("status") == "False"
                   for c in status.get("conditions") or ())


def warning(ev):
    return {"objectMeta": {"creationTimestamp": None}, "typeMeta": {},
            "message": ev.get("message", ""), "sourceComponent": "", "sourceHost": "",
            "object": "", "count": 0,
            "firstSeen": None, "lastSeen": None, "reason": ev.get("reason", ""),
            "type": event_type(ev)}


def warnings(pods, rel):
    """PodWarnings of the not-ready pods among ``pods``: Warning events, one per reason."""
    by_object = rel.events_by_object()
    seen, out = set(), []
    for pod in pods:
        if pod_ready(pod):
            continue
        for ev in by_object.get((pod.get("metadata") or {}).get("uid"), ()):
            reason = ev.get("reason", "")
            if event_type(ev) == "Warning" and reason not in seen:
                seen.add(reason)
                out.append(warning(ev))
    return out


def _resource_event_needs(obj):
    fields = "involvedObject.name=" + (obj.get("metadata") or {}).get("name", "")
    if obj.get("kind"):
        fields += ",involvedObject.kind=" + obj["kind"]
    return [Need("events", namespaces=scope_of(obj), critical=True, fields=fields)]


# The usual ``.../{name}/event`` sublist: events of the namespace about the parent, by name and
# kind (upstream matched the name only, so a service's events showed under its deployment).
RESOURCE_EVENTS = Sublist("event", "event", _resource_event_needs)
