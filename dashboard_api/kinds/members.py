"""Which metric series a kind's list item sums (``Kind.metrics``), declared with the kind.

A ``Members`` says which sidecar series an item of the kind is made of (``series``: "pod" for
(namespace, pod) keys, "node" for node names), how to find them from the item and the related
objects the list already read (``needs``, a subset of the kind's ``list_needs``: the decorator
reads no list of its own), how the item's metric is labelled, and whether the kind's detail
carries metrics too. metrics/lists.py applies it; nothing there names a kind.
"""
from dashboard_api.summaries.workloads import items as workloads


class Members:
    def __init__(self, series, keys, label, needs=(), detail=False):
        self.series = series     # "pod" or "node"
        self._keys = keys        # (meta, rel) -> [key]
        self._label = label      # (kind name, meta, keys) -> {label: [values]}
        self.needs = tuple(needs)
        self.detail = detail     # the kind's detail carries ``metrics`` too

    def keys(self, meta, rel):
        """The series keys of one object, from its ObjectMeta (or raw metadata)."""
        return self._keys(meta, rel)

    def label(self, kind_name, meta, keys):
        return self._label(kind_name, meta, keys)


def _self_pod(meta, rel):
    return [(meta.get("namespace", ""), meta["name"])]


def _self_node(meta, rel):
    return [meta["name"]]


def _joined(pods_of):
    def keys(meta, rel):
        owner = {"metadata": {"uid": meta.get("uid")}}
        return [((pod.get("metadata") or {}).get("namespace", ""), pod["metadata"]["name"])
                for pod in pods_of(owner, rel)]
    return keys


def _pods_label(kind_name, meta, keys):
    return {"namespace": [meta.get("namespace", "")], "pod": sorted(pod for _, pod in keys)}


def _owner_label(kind_name, meta, keys):
    label = _pods_label(kind_name, meta, keys)
    label[kind_name] = [meta["name"]]
    return label


def _node_label(kind_name, meta, keys):
    return {"node": [meta["name"]]}


POD = Members("pod", _self_pod, _pods_label, detail=True)
NODE = Members("node", _self_node, _node_label, detail=True)
OWNED_PODS = Members("pod", _joined(workloads.owned_pods), _owner_label, needs=("pods",))
DEPLOYMENT_PODS = Members("pod", _joined(workloads.deployment_pods), _owner_label,
                          needs=("pods", "replicasets"))
