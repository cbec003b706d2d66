"""The list status block of workloads (reference §5.2): running, pending and failed counted
per workload, from the pods they own, or from the watch cache's counters kept per event."""

from dashboard_api.summaries.common import resource_status, uid
from dashboard_api.summaries.events import warnings


def _status_by(pods_of):
    """The list status of workloads whose pods ``pods_of(obj, rel)`` gives: per workload,
    failed when its pods have warnings, else pending when one pends, else running (the rule
    the counted forms below follow; tests compare them with it)."""
    def list_status(raw, rel):
        out = resource_status()
        for obj in raw:
            pods = pods_of(obj, rel)
            if warnings(pods, rel):
                out["failed"] += 1
            elif any((p.get("status") or {}).get("phase") == "Pending" for p in pods):
                out["pending"] += 1
            else:
                out["running"] += 1
        return out
    return list_status


# The list status of workloads from the sets of workloads with a warned not-ready pod and with
# a pending pod (Related: off the pod store's indexes and the watch cache's joins, kept per
# event), so a page under pod churn costs set intersections, not a walk of every workload's
# pods (issue #30): the same rule as _status_by. The watch cache keeps each workload's UID as
# its facts, all in one group.

def status_facts(obj):
    return uid(obj)


def status_split(facts):
    """No bucket from the workload alone: its UID, kept for status_counted (a workload
    without one, never cached, is running: it owns no pods)."""
    return (None, facts) if facts else ("running", None)


def _counted_by(failing_of, pending_of, counted_of=lambda rel: None):
    """(list_status, status_counted) of workloads, ``failing_of(rel)`` and ``pending_of(rel)``
    the sets of those with a warned not-ready pod and with a pending pod; ``counted_of(rel)``
    the watch cache's count of both by namespace (cache/joined.py Counted), or None."""
    def list_status(raw, rel, facts=None):
        failing, pending = failing_of(rel), pending_of(rel)
        out = resource_status()
        for owner in facts if facts is not None else map(uid, raw):
            out["failed" if owner in failing else "pending" if owner in pending
                else "running"] += 1
        return out

    def status_counted(counts, groups, rel):
        """list_status from the watch cache's counters: ``groups`` {namespace: {None: {uid:
        uid}}} of the workloads (all those of the cached store, by namespace), counted per
        namespace by ``counted_of(rel)`` when the cache keeps that count, else met with the
        sets by C-level set intersections."""
        counted = counted_of(rel)
        if counted is None:
            failing, pending = failing_of(rel), pending_of(rel)
        out = resource_status()
        for bucket, n in counts.items():
            out[bucket] += n
        for namespace, part in groups.items():
            for group in part.values():
                uids = group.keys()
                if counted is not None:
                    failed, pends = counted.count(namespace)
                else:
                    failed = len(uids & failing)
                    pends = len((uids & pending) - failing)
                out["failed"] += failed
                out["pending"] += pends
                out["running"] += len(uids) - failed - pends
        return out
    return list_status, status_counted


# Replica sets, replication controllers, daemon sets, stateful sets: the controllers of the
# pods (``owned_status_counted(kind)``, counted per namespace for the kind's store);
# deployments: the owners of those replica sets.
def _warned_controllers(rel):
    return rel.warned_controllers()


def _pending_controllers(rel):
    return rel.pending_controllers()


list_status = _counted_by(_warned_controllers, _pending_controllers)[0]


def owned_status_counted(kind):
    """status_counted of the workloads of ``kind`` owning their pods, from the watch cache's
    count by namespace kept for that kind (kinds.joins.COUNTED) when the page's pods and events
    are cached, else by set intersections."""
    return _counted_by(_warned_controllers, _pending_controllers,
                       lambda rel: rel.owners_counted(kind))[1]


# Deployments: counted per namespace over the replica sets they own (kinds.joins.COUNTED).
deployment_list_status, deployment_status_counted = _counted_by(
    lambda rel: rel.warned_deployments(), lambda rel: rel.pending_deployments(),
    lambda rel: rel.owners_counted("deployment", ("replicasets", "pods", "events")))


# The status a workload's list shows of it (a search's ``status:``, query/search.py): the
# bucket its list status block counts it in, by the same rule and the same sets.

def _status_text_by(failing_of, pending_of):
    def status_text(obj, rel):
        owner = uid(obj)
        if owner and owner in failing_of(rel):
            return "Failed"
        if owner and owner in pending_of(rel):
            return "Pending"
        return "Running"
    return status_text


def _buckets_by(failing_of, pending_of):
    """The same statuses as sets of UIDs (query.search.Facets.buckets)."""
    def buckets(rel):
        return (("Failed", failing_of(rel)), ("Pending", pending_of(rel))), "Running"
    return buckets


owned_status_text = _status_text_by(_warned_controllers, _pending_controllers)
owned_status_buckets = _buckets_by(_warned_controllers, _pending_controllers)
deployment_status_text = _status_text_by(lambda rel: rel.warned_deployments(),
                                         lambda rel: rel.pending_deployments())
deployment_status_buckets = _buckets_by(lambda rel: rel.warned_deployments(),
                                        lambda rel: rel.pending_deployments())


# Jobs: failed or complete by their conditions, else running when one of their pods runs (the
# pods' "running_job" index, kept per event), else pending; facts (state, UID).
_JOB_DONE = {"Failed": "failed", "Complete": "succeeded"}


def _job_state(obj):
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("status") == "True" and c.get("type") in _JOB_DONE:
            return c["type"]
    return "Running"


def job_status_text(obj):
    """What a job's list shows as its status (``jobStatus.status``): Complete, Failed or
    Running."""
    return _job_state(obj)


def job_status_facts(obj):
    return _job_state(obj), uid(obj)


def job_status_split(facts):
    """Failed or complete from the job alone; else its UID, kept for job_status_counted (a
    job without one owns no pods: pending)."""
    state, owner = facts
    if state in _JOB_DONE:
        return _JOB_DONE[state], None
    return (None, owner) if owner else ("pending", None)


def job_list_status(raw, rel, facts=None):
    running = rel.running_jobs()
    out = resource_status()
    for state, owner in facts if facts is not None else map(job_status_facts, raw):
        out[_JOB_DONE.get(state) or ("running" if owner in running else "pending")] += 1
    return out


def job_status_counted(counts, groups, rel):
    """job_list_status from the watch cache's counters (``groups`` {namespace: {None: {uid:
    facts}}} of the jobs neither failed nor complete), by one set intersection per namespace."""
    running = rel.running_jobs()
    out = resource_status()
    for bucket, n in counts.items():
        out[bucket] += n
    for part in groups.values():
        for group in part.values():
            uids = group.keys()
            found = len(uids & running)
            out["running"] += found
            out["pending"] += len(uids) - found
    return out
