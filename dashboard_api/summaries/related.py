"""``Related``: the related raw objects one request read for its summaries ("pods", "events",
...), and the joins summaries make of them: kept by the watch cache per event when the reads
came from it (a store's ``lookup`` and ``joined``), else built once per request."""

from dashboard_api.summaries.common import controller_uid, uid
from dashboard_api.summaries.events import event_type, pod_ready


class Related(dict):
    """Related raw objects fetched for one request, by key ("pods", "events", ...).

    A missing key reads as an empty list; ``index`` builds and keeps a lookup table once, so a
    list of 2,000 items does not rescan the related lists per item. A list from the watch cache
    has a ``lookup(index)`` of its own, kept up to date by the cache, so nothing is rescanned.
    """

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._indexes = {}

    def __missing__(self, key):
        return []

    def __setitem__(self, key, value):
        # A read that lands after an index was built (a later round of Fetch.settle) must
        # not be hidden by that index.
        self._indexes.clear()
        super().__setitem__(key, value)

    def index(self, name, build):
        if name not in self._indexes:
            self._indexes[name] = build(self)
        return self._indexes[name]

    def by_controller(self, key):
        """Objects of ``key`` grouped by the UID of their controller owner."""
        lookup = getattr(self[key], "lookup", None)
        if lookup is not None:  # a cached list brings its store's index
            return lookup("controller")

        def build(rel):
            out = {}
            for obj in rel[key] or ():
                owner = controller_uid(obj)
                if owner:
                    out.setdefault(owner, []).append(obj)
            return out
        return self.index(("by_controller", key), build)

    def events_by_object(self):
        """Events grouped by involvedObject.uid."""
        lookup = getattr(self["events"], "lookup", None)
        if lookup is not None:
            return lookup("involved")

        def build(rel):
            out = {}
            for ev in rel["events"] or ():
                u = (ev.get("involvedObject") or {}).get("uid")
                if u:
                    out.setdefault(u, []).append(ev)
            return out
        return self.index("events_by_object", build)

    def warned_objects(self):
        """The UIDs of the objects with at least one Warning event, as a set-like view: from a
        cached list, its store's index (kept per event), else found by a scan."""
        lookup = getattr(self["events"], "lookup", None)
        if lookup is not None:
            return lookup("warned").uids()

        def build(rel):
            return {u for u, evs in rel.events_by_object().items()
                    if any(event_type(ev) == "Warning" for ev in evs)}
        return self.index("warned_objects", build)

    def warned_moves(self):
        """From a cached event list, the watch cache's join counting, by (namespace, bucket),
        the not-ready pods whose Warning event moves them to ``failed`` in the pods' list
        status (kept per event; pods.status_counted), else None."""
        joined = getattr(self["events"], "joined", None)
        return joined("warned_moves") if joined is not None else None

    def pending_controllers(self):
        """The UIDs of the controllers of a pod in phase Pending, set-like: from a cached pod
        list, its store's "pending" index (kept per event), else found by a scan."""
        lookup = getattr(self["pods"], "lookup", None)
        if lookup is not None:
            return lookup("pending").uids()
        return self.index("pending_controllers", lambda rel: {
            owner for pod in rel["pods"] or ()
            if (pod.get("status") or {}).get("phase") == "Pending"
            for owner in [controller_uid(pod)] if owner})

    def warned_controllers(self):
        """The UIDs of the controllers of a not-ready pod with a Warning event, set-like: from
        cached pod and event lists, the watch cache's join of the pods' "unready" index with
        the events' "warned" one (kept per event, O(1) here); from a cached pod list alone,
        its "unready" index met with the warned objects, a step per such pod; else found by a
        scan."""
        joined = getattr(self["pods"], "joined", None)
        found = joined("warned_owners", self["events"]) if joined is not None else None
        if found is not None:
            return found.owners()
        warned = self.warned_objects()
        lookup = getattr(self["pods"], "lookup", None)
        if lookup is not None:
            unready = lookup("unready")
            return {owner for pod_uid in unready.uids() & warned
                    for pod in unready.unordered(pod_uid)
                    for owner in [controller_uid(pod)] if owner}

        def build(rel):
            return {owner for pod in rel["pods"] or ()
                    if not pod_ready(pod) and uid(pod) in warned
                    for owner in [controller_uid(pod)] if owner}
        return self.index("warned_controllers", build)

    def owners_counted(self, kind, reads=("pods", "events")):
        """From cached lists of ``reads`` (the store keeping the count, then the others it
        reads: kinds.joins.COUNTED), the watch cache's count by namespace of the workloads of
        ``kind`` failed and pending in their list status (cache/joined.py Counted, kept per
        event), else None."""
        first, *others = reads
        joined = getattr(self[first], "joined", None)
        return joined(kind + "_status", *(self[read] for read in others)) \
            if joined is not None else None

    def warned_deployments(self):
        """The UIDs of the deployments owning a replica set in ``warned_controllers``: from
        cached pods, events and replica sets, the watch cache's join (kept per event), else
        found by a walk of the replica sets."""
        joined = getattr(self["replicasets"], "joined", None)
        found = joined("warned_deployments", self["pods"], self["events"]) \
            if joined is not None else None
        if found is not None:
            return found.owners()
        return self.index("warned_deployments",
                          lambda rel: _owners_of(rel["replicasets"], rel.warned_controllers()))

    def pending_deployments(self):
        """The UIDs of the deployments owning a replica set in ``pending_controllers``: as
        ``warned_deployments``."""
        joined = getattr(self["replicasets"], "joined", None)
        found = joined("pending_deployments", self["pods"]) if joined is not None else None
        if found is not None:
            return found.owners()
        return self.index("pending_deployments",
                          lambda rel: _owners_of(rel["replicasets"], rel.pending_controllers()))

    def running_jobs(self):
        """The UIDs of the controllers of a pod in phase Running (all that a job's list status
        asks): from a cached pod list, its "running_job" index (kept per event), else found by
        a scan."""
        lookup = getattr(self["pods"], "lookup", None)
        if lookup is not None:
            return lookup("running_job").uids()
        return self.index("running_jobs", lambda rel: {
            owner for pod in rel["pods"] or ()
            if (pod.get("status") or {}).get("phase") == "Running"
            for owner in [controller_uid(pod)] if owner})


def _owners_of(objects, uids):
    """The controllers of the ``objects`` whose UID is in ``uids``."""
    return {owner for obj in objects or () if uid(obj) in uids
            for owner in [controller_uid(obj)] if owner}


EMPTY = Related()  # no related objects (read-only: never assign to it)
