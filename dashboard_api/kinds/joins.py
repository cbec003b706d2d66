"""The join indexes kinds declare (``Kind.indexes``): per object, the values it is found by.

The watch cache keeps one index per name in each kind's store (cache/store.py ``Index``);
summaries.related.Related reads them by name (``by_controller`` -> "controller",
``events_by_object`` -> "involved", ``warned_objects`` -> "warned"). Pure functions of the slim
object, so a typed record (issue #19) needs only the fields they read: ownerReferences' uid,
controller and kind, spec.nodeName, a pod's phase and Ready condition, involvedObject's uid and
name, and the event's type.

A ``Field`` is the index of one field a field selector reads: the cache answers the selector's
equality from it (a node's pods by spec.nodeName, an object's events by involvedObject.name)
instead of walking the namespaces (lists/cachesource.py, cache/fieldindex.py).
"""

from dashboard_api.query.fields import Field
from dashboard_api.summaries import cluster
from dashboard_api.summaries.common import controller_ref, controller_uid
from dashboard_api.summaries.events import event_type, pod_ready
from dashboard_api.summaries.podstatus import list_phase


def controller(obj):
    owner = controller_uid(obj)
    return (owner,) if owner else ()


node = Field("spec.nodeName")
# An object's events sublist selects its events by involvedObject.name and kind (a node's over
# all namespaces): by name, as few as the object's own (kinds are few, names many).
involved_name = Field("involvedObject.name")


def involved(obj):
    uid = (obj.get("involvedObject") or {}).get("uid")
    return (uid,) if uid else ()


def warned(obj):
    """The involved object of a Warning event: the pods' list status counts a not-ready pod
    with one as failed, and needs only which pods have one (pods.status_counted)."""
    return involved(obj) if event_type(obj) == "Warning" else ()


def pending_controller(obj):
    """The controller of a pod in phase Pending: a workload with one is ``pending`` in its
    list's status (summaries.workloads.list_status); few pods pend, so the index is small."""
    if ((obj.get("status") or {}).get("phase")) == "Pending":
        return controller(obj)
    return ()


def unready(obj):
    """The UID of a pod not ready: a workload whose not-ready pod has a Warning event is
    ``failed`` in its list's status (summaries.workloads.list_status)."""
    uid = (obj.get("metadata") or {}).get("uid")
    return (uid,) if uid and not pod_ready(obj) else ()


def running_job(obj):
    """The job controlling a running pod: a job neither complete nor failed is ``running``
    in its list's status when it has one, else ``pending`` (summaries.workloads); only pods
    of jobs, so the index is small."""
    ref = controller_ref(obj)
    if ref and ref.get("kind") == "Job" and ref.get("uid") and \
            (obj.get("status") or {}).get("phase") == "Running":
        return (ref["uid"],)
    return ()


CONTROLLED = {"controller": controller}

def warned_move(obj):
    """(namespace, list-status bucket) of a not-ready pod that a Warning event moves to
    ``failed`` (its bucket differs with one, summaries.pods.status_split), else None: the pods'
    list status counts them per event ("warned_moves", summaries.pods.status_counted)."""
    plain = list_phase(obj, False)
    if list_phase(obj, True) == plain:
        return None
    return (obj.get("metadata") or {}).get("namespace") or "", plain


# Joins the watch cache keeps per event (cache/joined.py), for the list status blocks
# (summaries.related.Related). JOINED: name -> (kind, its index, the kind met with, its index,
# the owner of the first kind's object): "warned_owners", the controllers of the not-ready pods
# with a Warning event; "warned_moves", such pods counted by namespace and bucket. LIFTED:
# name -> (kind, its index by controller, the kind of its children, their index or join): the
# deployments owning a replica set in that index or join.
JOINED = {"warned_owners": ("pod", "unready", "event", "warned", controller_uid),
          "warned_moves": ("pod", "unready", "event", "warned", warned_move)}
LIFTED = {"warned_deployments": ("replicaset", "controller", "pod", "warned_owners"),
          "pending_deployments": ("replicaset", "controller", "pod", "pending")}

# Counts the watch cache keeps per event, by namespace, for the list status of workloads
# (summaries.workloads.owned_status_counted): name -> (kind counted, the kind whose store
# holds the sources, the join or index of the owners failed, that of the owners pending). Read
# by a page as O(namespaces), not a lookup per workload (issue #30). Deployments: the owners
# of the replica sets failed or pending (LIFTED).
OWNED_KINDS = ("replicaset", "replicationcontroller", "daemonset", "statefulset")
COUNTED = {kind + "_status": (kind, "pod", "warned_owners", "pending") for kind in OWNED_KINDS}
COUNTED["deployment_status"] = ("deployment", "replicaset", "warned_deployments",
                                "pending_deployments")

# Sums the watch cache keeps per event (cache/summed.py) over one index's buckets: name ->
# (kind, its index, the field selector of the rows summed, a row's object -> the parts summed,
# how many parts).
# "node_allocated": per node, its pods neither Succeeded nor Failed counted, and their requests
# and limits summed (a node list item's allocatedResources, summaries.cluster.allocated); the
# cache answers a read of "spec.nodeName=<node>,<that selector>" with them (issue #30).
SUMMED = {"node_allocated": ("pod", "node", cluster.RUNNING_PODS, cluster.pod_resources, 2)}
