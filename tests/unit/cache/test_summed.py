"""A node's allocated resources from the watch cache (issue #30): its running pods counted and
their requests and limits summed per pod event (cache/summed.py) are what a sum over the
node's pods, read afresh, gives, through pod adds, updates, deletes and full LISTs."""

import asyncio
import concurrent.futures
import random

from dashboard_api.cache import relists, slim
from dashboard_api.cache.joined import join_stores
from dashboard_api.cache.rows import row_of
from dashboard_api.cache.store import Store
from dashboard_api.cache.summed import SummedRead
from dashboard_api.kinds import table as kinds
from dashboard_api.lists import cachesource as source
from dashboard_api.summaries import cluster

NODES = ("n1", "n2", "n3")
PHASES = ("Running", "Running", "Pending", "Succeeded", "Failed")
QUANTITIES = ("100m", "250m", "1", "1.5", "64Mi", "1Gi", "0", "2e3", "333m")


def _node(name):
    return {"metadata": {"name": name, "uid": "u-" + name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi"},
                       "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def _resources(rnd):
    out = {}
    for part in ("requests", "limits"):
        if rnd.random() < 0.8:
            out[part] = {"cpu": rnd.choice(QUANTITIES), "memory": rnd.choice(QUANTITIES)}
            if rnd.random() < 0.2:
                out[part]["nvidia.com/gpu"] = "1"
    return out


def _pod(rnd, ns, name, node=None):
    spec = {"containers": [{"name": "c%d" % k, "image": "i", "resources": _resources(rnd)}
                           for k in range(rnd.randint(1, 3))]}
    if rnd.random() < 0.3:
        spec["initContainers"] = [{"name": "init", "image": "i", "resources": _resources(rnd)}]
    if rnd.random() < 0.2:
        spec["overhead"] = {"cpu": "10m", "memory": "1Mi"}
    node = node if node is not None else rnd.choice(NODES + ("",))
    if node:
        spec["nodeName"] = node
    return {"metadata": {"namespace": ns, "name": name, "uid": "%s-%s-%d" % (
        ns, name, rnd.random() * 1e9), "creationTimestamp": "2024-01-01T00:00:00Z"},
            "spec": spec, "status": {"phase": rnd.choice(PHASES)}}


class Cluster:
    """The pods as the API server has them, and the watch cache's pod store fed their events."""

    def __init__(self, rnd, count):
        self.rnd = rnd
        self.kind = kinds.get("pod")
        self.pods = {}
        for i in range(count):
            self._keep(_pod(rnd, rnd.choice("ab"), "p%d" % i))
        self.store = Store(self.kind, self.kind.indexes)
        self.store.replace(self._rows(), "1")
        join_stores({"pod": self.store})

    def _keep(self, pod):
        self.pods[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = pod

    def _row(self, pod):
        return row_of(self.kind, slim.slim(self.kind, pod))

    def _rows(self):
        return [self._row(pod) for pod in self.pods.values()]

    def event(self, type_, pod):
        if type_ == "DELETED":
            del self.pods[(pod["metadata"]["namespace"], pod["metadata"]["name"])]
        else:
            self._keep(pod)
        self.store.apply(type_, self._row(pod), "2")

    def read(self, node):
        """What the node list page reads of the node's pods (through the cache source)."""
        return source._summed(self.store, cluster.node_pods_needs(_node(node))[0].fields)

    def fresh(self, node):
        """The node's running pods from the pods themselves, in the API server's order."""
        return [self.pods[key] for key in sorted(self.pods)
                if self.pods[key]["spec"].get("nodeName") == node
                and self.pods[key]["status"]["phase"] not in ("Succeeded", "Failed")]

    def check(self):
        for node in NODES + ("gone",):
            selected = self.read(node)
            assert isinstance(selected, SummedRead)
            fresh = self.fresh(node)
            assert cluster.allocated(_node(node), selected) == \
                cluster.allocated(_node(node), fresh)
            count, sums = selected.totals()
            fresh_count, fresh_sums = cluster.summed_resources(fresh)
            assert count == fresh_count and [_nonzero(s) for s in sums] == [
                _nonzero(s) for s in fresh_sums]
            # listed when iterated: the pods a field selector reads, in the store's order
            assert [p["metadata"]["name"] for p in selected] == [
                p["metadata"]["name"] for p in fresh]
        # every node kept (also one whose pods all left: its zero) is its pods' sum afresh
        summed = self.store.joins["node_allocated"][0]
        for node, (count, sums) in summed.kept.items():
            fresh_count, fresh_sums = cluster.summed_resources(self.fresh(node))
            assert count == fresh_count and [_nonzero(s) for s in sums] == [
                _nonzero(s) for s in fresh_sums]


def _nonzero(sums):
    return {key: value for key, value in sums.items() if value}


def test_node_sums_kept_per_event_equal_a_sum_of_the_nodes_pods_afresh():
    rnd = random.Random(30)
    c = Cluster(rnd, 40)
    c.check()   # every node's sums made from its bucket, then kept
    names = sorted(c.pods)
    for step in range(300):
        action = rnd.random()
        if action < 0.3 or not names:      # a new pod (scheduled or not)
            ns, name = rnd.choice("ab"), "new%d" % step
            c.event("ADDED", _pod(rnd, ns, name))
            names.append((ns, name))
        elif action < 0.7:                 # a change: phase, resources, scheduled on a node
            ns, name = rnd.choice(names)
            old = c.pods[(ns, name)]
            new = _pod(rnd, ns, name, node=old["spec"].get("nodeName") or None)
            new["metadata"]["uid"] = old["metadata"]["uid"]
            c.event("MODIFIED", new)
        else:                              # deleted
            ns, name = names.pop(rnd.randrange(len(names)))
            c.event("DELETED", c.pods[(ns, name)])
        if step % 10 == 0:
            c.check()
    c.check()


def test_node_sums_after_full_lists_swapped_in_or_applied_as_events(monkeypatch):
    rnd = random.Random(31)
    c = Cluster(rnd, 30)
    c.check()

    async def run(fn, *args):
        return fn(*args)

    # a re-list with a few changes applies them as events (sums kept), one with many is
    # swapped in whole (sums dropped, made again when asked)
    for changed in (3, 30):
        if changed == 30:   # as a large re-list is, at this small size
            monkeypatch.setattr(relists, "SMALL_RELIST", 0)
            monkeypatch.setattr(relists, "SMALL_SHARE", 0)
        for key in rnd.sample(sorted(c.pods), min(changed, len(c.pods))):
            c._keep(_pod(rnd, key[0], key[1]))
        for i in range(changed // 3):
            c._keep(_pod(rnd, "a", "relisted%d-%d" % (changed, i)))
        swapped = asyncio.run(c.store.relist(c._rows(), "3", run))
        assert swapped == (changed == 30)
        c.check()
    c.store.replace(c._rows(), "4")
    c.check()
    # every pod of a node deleted: its sums kept go to zero (a node's entry stays, bounded by
    # the nodes asked for, until the next full LIST)
    for key in [k for k, p in c.pods.items() if p["spec"].get("nodeName") == "n1"]:
        c.event("DELETED", c.pods[key])
    c.check()
    count, sums = c.store.joins["node_allocated"][0].kept["n1"]
    assert count == 0 and [_nonzero(s) for s in sums] == [{}, {}]


def test_only_a_read_of_exactly_a_nodes_running_pods_is_answered_by_the_sums():
    c = Cluster(random.Random(32), 10)
    assert c.read("n1") is not None
    for fields in ("spec.nodeName=n1", "spec.nodeName=n1,status.phase!=Failed",
                   "spec.nodeName=n1,status.phase=Running",
                   "spec.nodeName==n1," + cluster.RUNNING_PODS,
                   "spec.nodeName=n1,spec.nodeName=n2," + cluster.RUNNING_PODS,
                   cluster.RUNNING_PODS):
        assert source._summed(c.store, fields) is None, fields
    # the order of the selector's parts does not matter
    assert source._summed(c.store, "status.phase!=Failed, spec.nodeName=n1 ,"
                                   "status.phase!=Succeeded") is not None


def test_sums_asked_from_another_thread_are_made_afresh_and_not_kept():
    """Only the thread applying the events (the event loop's) keeps a node's sums: one made
    elsewhere could miss an event applied meanwhile, for good."""
    c = Cluster(random.Random(33), 20)
    summed = c.store.joins["node_allocated"][0]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        count, _sums = pool.submit(c.read("n1").totals).result()
    assert count == len(c.fresh("n1")) and "n1" not in summed.kept
    c.read("n1").totals()
    assert "n1" in summed.kept
