"""In-memory state of the pods a simulated kubelet runs (no I/O here)."""

import hashlib
import time

ANNOTATION_PREFIX = "sim.dashboard.io/"


def now_ns():
    return time.time_ns()


class SimContainer:
    def __init__(self, name, image, init=False):
        self.name = name
        self.image = image
        self.init = init
        self.instance = 0           # restart number; also the log file of the current instance
        self.state = "waiting"      # waiting | running | terminated
        self.reason = "PodInitializing" if init else "ContainerCreating"
        self.message = None
        self.started_at = None      # ns
        self.finished_at = None     # ns
        self.exit_code = None
        self.last = None            # (instance, lastState.terminated) of the previous instance

    def container_id(self, pod_uid, instance=None):
        seed = "%s/%s/%d" % (pod_uid, self.name, self.instance if instance is None else instance)
        return "containerd://" + hashlib.sha256(seed.encode()).hexdigest()

    @property
    def running(self):
        return self.state == "running"


class SimPod:
    def __init__(self, obj, node):
        meta, spec = obj["metadata"], obj["spec"]
        self.namespace = meta["namespace"]
        self.name = meta["name"]
        self.uid = meta["uid"]
        self.node = node
        self.obj = obj  # the last object seen from the apiserver
        self.ip = None
        self.start_ns = None
        self.init_containers = [SimContainer(c["name"], c.get("image", ""), init=True)
                                for c in spec.get("initContainers") or []]
        self.containers = [SimContainer(c["name"], c.get("image", "")) for c in spec["containers"]]
        self.conditions = {}        # type -> (status, lastTransitionTime ns)
        self.timers = set()
        self.dirty = False
        self.writing = False
        self.gone = False

    @property
    def spec(self):
        return self.obj["spec"]

    @property
    def key(self):
        return (self.namespace, self.name)

    def annotation(self, name, default=None):
        annotations = self.obj["metadata"].get("annotations") or {}
        return annotations.get(ANNOTATION_PREFIX + name, default)

    def number(self, name, default, limit):
        """A numeric annotation within [0, limit]; default when absent or not a number."""
        try:
            value = float(self.annotation(name, default))
        except ValueError:
            return default
        return min(max(value, 0), limit) if value == value else default  # NaN is not a number

    @property
    def is_job_pod(self):
        refs = self.obj["metadata"].get("ownerReferences") or []
        return any(r.get("kind") == "Job" for r in refs)

    def container(self, name):
        for c in self.init_containers + self.containers:
            if c.name == name:
                return c
        return None

    def spec_of(self, name):
        for c in (self.spec.get("initContainers") or []) + self.spec["containers"]:
            if c["name"] == name:
                return c
        return None
