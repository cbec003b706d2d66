"""The rest of a 150,000-pod cluster for the stand-in API server (issue #30), beside its pods:
replica sets of every deployment's history, nodes with their images, events arriving and
expiring, services, endpoint slices and config maps (``standin --composition``).

At 150,000 pods: 66,000 replica sets (one live per app of 20 pods, the rest its history scaled
to zero, each with its whole pod template), 5,000 nodes of 15-25 KB with 40-60 images, 200,000
events (50 new and 50 expiring a second), 6,000 services with one endpoint slice each (an
endpoint per pod of its app) and 12,000 config maps. Smaller runs scale every count by pods /
150,000 (at least one of each); the event rate stays 50 a second unless told.

As for pods, nothing is stored as JSON: an object is made from its index when it is served.
"""

import bisect
import json
from array import array

from tests.bench import heavy

FULL_PODS = 150000
FULL = {"replicasets": 66000, "nodes": 5000, "events": 200000, "services": 6000,
        "endpointslices": 6000, "configmaps": 12000}
EVENT_RATE = 50.0
REASONS = [("Normal", "Scheduled", "Successfully assigned %s/%s to %s"),
           ("Normal", "Pulled", "Container image \\\"registry.example.com/bench/%s\\\" already "
                                "present on machine"),
           ("Normal", "Created", "Created container %s"),
           ("Normal", "Started", "Started container %s"),
           ("Warning", "BackOff", "Back-off restarting failed container %s in pod %s")]


def counts(pods):
    """{plural: objects} of the composition beside ``pods`` pods."""
    scale = pods / FULL_PODS
    out = {plural: max(1, int(round(full * scale))) for plural, full in FULL.items()}
    out["replicasets"] = max(out["replicasets"], apps_of(pods))
    return out


def apps_of(pods, per_set=20):
    return (pods + per_set - 1) // per_set


class Blocks:
    """``n`` objects of one kind, each of an app; the objects of a namespace are contiguous
    (apps are in namespace order), as the API server lists them: ``starts[k]`` is the first
    object of namespace k."""

    def __init__(self, n, app_of, pods):
        self.n = n
        self.app_of = app_of
        namespaces = len(pods.starts) - 1
        self.starts = [0] * (namespaces + 1)
        k = 0
        for i in range(n):
            ns = pods.namespace_of(min(pods.n - 1, app_of(i) * pods.per_set))
            while k < ns:
                k += 1
                self.starts[k] = i
        while k < namespaces:
            k += 1
            self.starts[k] = n


class Composition:
    """Every kind but pods and namespaces: ``tables`` {plural: (Blocks or None, encode)}."""

    def __init__(self, pods, node_count, event_rate=EVENT_RATE, sizes=None):
        self.pods = pods
        sizes = sizes or counts(pods.n)
        self.sizes = sizes
        self.apps = apps_of(pods.n, pods.per_set)
        self.node_count = node_count
        self.event_rate = event_rate
        self._managed = {}   # plural -> its objects' managedFields, when the pods are heavy
        rs = sizes["replicasets"]
        self.rs_base, self.rs_extra = divmod(rs, self.apps)
        self.replicasets = Blocks(rs, lambda j: self.rs_of(j)[0], pods)
        services = sizes["services"]
        self.services = Blocks(services, lambda s: s * self.apps // services, pods)
        maps = sizes["configmaps"]
        self.configmaps = Blocks(maps, lambda c: c * self.apps // maps, pods)
        # events: ids [lo, hi) are live; rv[k] is event k's resourceVersion
        self.lo, self.hi = 0, sizes["events"]
        self.target = sizes["events"]
        self.event_rv = array("Q", [1] * sizes["events"])
        self._event_orders = {}   # a LIST's version -> the live events in key order
        self._event_keys = sorted(map(self._event_key, self.live_events()))
        self.carry = 0.0

    # --- replica sets -------------------------------------------------------------------

    def rs_of(self, j):
        """(app, revision) of replica set j; revision 0 is the live one."""
        base, extra = self.rs_base, self.rs_extra
        if j < extra * (base + 1):
            return divmod(j, base + 1)
        app, revision = divmod(j - extra * (base + 1), base)
        return extra + app, revision

    def replicaset(self, j):
        pods = self.pods
        app, revision = self.rs_of(j)
        ns = "ns-%02d" % pods.namespace_of(min(pods.n - 1, app * pods.per_set))
        name = "app-%05d" % app
        if revision == 0:
            rs, uid, replicas = name + "-5d8f7c9b6", "%08x-0000-4000-9000-%012x" % (app, app), \
                min(pods.per_set, pods.n - app * pods.per_set)
        else:
            rs, uid, replicas = "%s-%09x" % (name, 0x7a000000 + revision), \
                "%08x-0000-4000-9100-%012x" % (app, j), 0
        created = pods.stamp_of(max(0, app * pods.per_set) - 3600 * (revision + 1))
        template = pods.template(app, revision)
        return RS % (rs, ns, uid, 10 + j, created, revision if revision else self.rs_base + 1, name,
                     rs[-9:], name, "%08x-0000-4000-9900-%012x" % (app, app), replicas,
                     name, rs[-9:], template, replicas, replicas, replicas, replicas)

    # --- nodes --------------------------------------------------------------------------

    def node(self, k):
        name = "node-%03d" % k
        created = self.pods.stamp_of(0)
        images = ",".join(IMAGE % (t, k * 7 + t, t, k * 131 + t, t, k * 7 + t, t, t % 9, t,
                                   k * 7 + t, 50000000 + (k * 7919 + t) % 900000000)
                          for t in range(40 + k % 21))
        conditions = ",".join(NODE_CONDITION % (t, s, r, created, created, m)
                              for t, s, r, m in NODE_CONDITIONS)
        return NODE % (name, k, 10 + k, created, k % 3, name, k, k, conditions, k >> 8,
                       k & 255, name, k, k, k, images)

    # --- services, endpoint slices, config maps ------------------------------------------

    def _app_ns(self, app):
        pods = self.pods
        return "ns-%02d" % pods.namespace_of(min(pods.n - 1, app * pods.per_set))

    def service(self, s):
        app = self.services.app_of(s)
        return SERVICE % ("svc-%05d" % s, self._app_ns(app), s, 20 + s,
                          self.pods.stamp_of(app * 20), app, app, s >> 8, s & 255, s >> 8, s & 255)

    def endpointslice(self, s):
        pods = self.pods
        app = self.services.app_of(s)
        first = app * pods.per_set
        endpoints = ",".join(ENDPOINT % (pods.ip(i), pods.node_of(i), self._app_ns(app),
                                         pods.name(i), pods.uid(i))
                             for i in range(first, min(pods.n, first + pods.per_set)))
        return SLICE % ("svc-%05d-%05x" % (s, s), self._app_ns(app), s, 30 + s,
                        self.pods.stamp_of(app * 20), "svc-%05d" % s, "svc-%05d" % s, endpoints)

    def configmap(self, c):
        app = self.configmaps.app_of(c)
        return CONFIG_MAP % ("app-%05d-config-%d" % (app, c), self._app_ns(app), c, 40 + c,
                             self.pods.stamp_of(app * 20), app, app, c % 17, app)

    # --- events --------------------------------------------------------------------------

    def event(self, k):
        pods = self.pods
        i = (k * 7919) % pods.n
        kind, reason, text = REASONS[k % len(REASONS)]
        name = pods.name(i)
        ns = "ns-%02d" % pods.namespace_of(i)
        if reason == "Scheduled":
            message = text % (ns, name, pods.node_of(i))
        elif reason == "BackOff":
            message = text % ("sidecar", name)
        else:
            message = text % ("sidecar" if k & 1 else "main")
        seen = pods.stamp_of(i + k % 3600)
        return EVENT % ("%s.%016x" % (name, k), ns, k, self.event_rv[k], seen, name, ns,
                        pods.uid(i), "sidecar" if k & 1 else "main", reason, message,
                        pods.node_of(i), seen, seen, 1 + k % 7, kind)

    def live_events(self):
        return range(self.lo, self.hi)

    def events_in_key_order(self, version):
        """The live events as an API server lists them, in etcd's key order (namespace + "/",
        then name), not the order they were made: the gateway's re-list walks a LIST in that
        order (dashboard_api/cache/relists.py). One order per LIST's version, the last few
        kept for its continued pages; the keys are kept sorted as events come and go, so no
        LIST waits for a sort."""
        order = self._event_orders.get(version)
        if order is None:
            order = self._event_orders[version] = array("Q", (k for _, k in self._event_keys))
            while len(self._event_orders) > 4:
                del self._event_orders[next(iter(self._event_orders))]
        return order

    def _event_key(self, k):
        pods = self.pods
        i = (k * 7919) % pods.n
        return ("ns-%02d/" % pods.namespace_of(i), "%s.%016x" % (pods.name(i), k)), k

    def tick_events(self, seconds, next_version):
        """This many seconds of event churn: [(plural, type, index)] of the changes, each
        given a version by ``next_version()``."""
        self.carry += self.event_rate * seconds
        count = int(self.carry)
        self.carry -= count
        changes = []
        for _ in range(count):
            k = self.hi
            self.hi += 1
            self.event_rv.append(next_version())
            changes.append((self.event_rv[k], "events", "ADDED", k))
            bisect.insort(self._event_keys, self._event_key(k))
            if self.hi - self.lo > self.target:
                changes.append((next_version(), "events", "DELETED", self.lo))
                keys = self._event_keys
                del keys[bisect.bisect_left(keys, self._event_key(self.lo))]
                self.lo += 1
        return changes

    def encode(self, plural, i):
        text = getattr(self, ENCODERS[plural])(i)
        if not self.pods.heavy:
            return text
        managed = self._managed.get(plural)
        if managed is None:   # one list per kind, made from its first object (heavy.py)
            managed = self._managed[plural] = heavy.managed_fields(
                json.loads(text), heavy.WRITERS[ENCODERS[plural]])
        return heavy.splice(text, managed)

    def table(self, plural):
        """(Blocks, or None for a cluster-scoped kind, count) of a static kind."""
        if plural == "nodes":
            return None, self.node_count
        blocks = {"replicasets": self.replicasets, "services": self.services,
                  "endpointslices": self.services, "configmaps": self.configmaps}[plural]
        return blocks, blocks.n


ENCODERS = {"replicasets": "replicaset", "nodes": "node", "services": "service",
            "endpointslices": "endpointslice", "configmaps": "configmap", "events": "event"}

RS = ('{"kind":"ReplicaSet","apiVersion":"apps/v1","metadata":{"name":"%s","namespace":"%s",'
      '"uid":"%s","resourceVersion":"%d","generation":2,"creationTimestamp":"%s",'
      '"annotations":{"deployment.kubernetes.io/desired-replicas":"20",'
      '"deployment.kubernetes.io/max-replicas":"25","deployment.kubernetes.io/revision":"%d"},'
      '"labels":{"app":"%s","pod-template-hash":"%s"},"ownerReferences":[{"apiVersion":'
      '"apps/v1","kind":"Deployment","name":"%s","uid":"%s","controller":true,'
      '"blockOwnerDeletion":true}]},"spec":{"replicas":%d,"selector":{"matchLabels":'
      '{"app":"%s","pod-template-hash":"%s"}},"template":%s},'
      '"status":{"replicas":%d,"fullyLabeledReplicas":%d,"readyReplicas":%d,'
      '"availableReplicas":%d,"observedGeneration":2}}')

IMAGE = ('{"names":["registry.example.com/team-%02d/image-%05d@sha256:%02d%062x",'
         '"registry.example.com/team-%02d/image-%05d:v1.%d.%d",'
         '"mirror.europe-west1.registry.example.com/cache/team-%02d/image-%05d:latest"],'
         '"sizeBytes":%d}')
NODE_CONDITIONS = [("NetworkUnavailable", "False", "RouteCreated", "route created"),
                   ("MemoryPressure", "False", "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available"),
                   ("DiskPressure", "False", "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure"),
                   ("PIDPressure", "False", "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available"),
                   ("Ready", "True", "KubeletReady",
                    "kubelet is posting ready status. AppArmor enabled")]
NODE_CONDITION = ('{"type":"%s","status":"%s","reason":"%s","lastHeartbeatTime":"%s",'
                  '"lastTransitionTime":"%s","message":"%s"}')
NODE = ('{"kind":"Node","apiVersion":"v1","metadata":{"name":"%s",'
        '"uid":"00000000-0000-4000-a000-%012x","resourceVersion":"%d","creationTimestamp":"%s",'
        '"labels":{"beta.kubernetes.io/arch":"amd64","beta.kubernetes.io/instance-type":'
        '"n2-standard-64","beta.kubernetes.io/os":"linux","cloud.google.com/machine-family":'
        '"n2","failure-domain.beta.kubernetes.io/region":"europe-west1",'
        '"failure-domain.beta.kubernetes.io/zone":"europe-west1-%d","kubernetes.io/arch":'
        '"amd64","kubernetes.io/hostname":"%s","kubernetes.io/os":"linux",'
        '"node.kubernetes.io/instance-type":"n2-standard-64"},"annotations":{'
        '"container.googleapis.com/instance_id":"%019d","csi.volume.kubernetes.io/nodeid":'
        '"{\\"pd.csi.storage.gke.io\\":\\"projects/bench/zones/europe-west1-b/instances/%d\\"}",'
        '"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-'
        'detach":"true"}},"spec":{"podCIDR":"10.244.0.0/24","podCIDRs":["10.244.0.0/24"],'
        '"providerID":"gce://bench/europe-west1-b/node"},"status":{"capacity":{"cpu":"64",'
        '"ephemeral-storage":"98831908Ki","hugepages-1Gi":"0","hugepages-2Mi":"0",'
        '"memory":"262144Mi","pods":"110"},"allocatable":{"cpu":"63","ephemeral-storage":'
        '"47060071478","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"260000Mi",'
        '"pods":"110"},"conditions":[%s],"addresses":[{"type":"InternalIP","address":'
        '"10.0.%d.%d"},{"type":"Hostname","address":"%s"}],"daemonEndpoints":'
        '{"kubeletEndpoint":{"Port":10250}},"nodeInfo":{"machineID":"%032x","systemUUID":'
        '"%032x","bootID":"%032x","kernelVersion":"5.10.0-bench","osImage":"Debian GNU/Linux '
        '11 (bullseye)","containerRuntimeVersion":"containerd://1.6.8","kubeletVersion":'
        '"v1.20.2","kubeProxyVersion":"v1.20.2","operatingSystem":"linux","architecture":'
        '"amd64"},"images":[%s]}}')

SERVICE = ('{"kind":"Service","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s",'
           '"uid":"00000000-0000-4000-c000-%012x","resourceVersion":"%d","creationTimestamp":'
           '"%s","labels":{"app":"app-%05d","app.kubernetes.io/part-of":"bench"},'
           '"annotations":{"cloud.google.com/neg":"{\\"ingress\\":true}"}},"spec":{"ports":'
           '[{"name":"http","protocol":"TCP","port":80,"targetPort":8080}],"selector":'
           '{"app":"app-%05d"},"clusterIP":"10.96.%d.%d","clusterIPs":["10.96.%d.%d"],'
           '"type":"ClusterIP","sessionAffinity":"None","ipFamilies":["IPv4"],'
           '"ipFamilyPolicy":"SingleStack","internalTrafficPolicy":"Cluster"},'
           '"status":{"loadBalancer":{}}}')

ENDPOINT = ('{"addresses":["%s"],"conditions":{"ready":true,"serving":true,'
            '"terminating":false},"nodeName":"%s","targetRef":{"kind":"Pod","namespace":"%s",'
            '"name":"%s","uid":"%s"},"zone":"europe-west1-b"}')
SLICE = ('{"kind":"EndpointSlice","apiVersion":"discovery.k8s.io/v1","metadata":{"name":"%s",'
         '"namespace":"%s","uid":"00000000-0000-4000-d000-%012x","resourceVersion":"%d",'
         '"creationTimestamp":"%s","generateName":"%s-","labels":{"endpointslice.kubernetes.io/'
         'managed-by":"endpointslice-controller.k8s.io","kubernetes.io/service-name":"%s"}},'
         '"addressType":"IPv4","endpoints":[%s],"ports":[{"name":"http","protocol":"TCP",'
         '"port":8080}]}')

CONFIG_MAP = ('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s",'
              '"uid":"00000000-0000-4000-e000-%012x","resourceVersion":"%d","creationTimestamp":'
              '"%s","labels":{"app":"app-%05d"}},"data":{"app.yaml":"name: app-%05d\\n'
              'replicas: 20\\nlog:\\n  level: info\\n  format: json\\nfeature_%d: true\\n'
              'server:\\n  port: 8080\\n  read_timeout: 30s\\n  write_timeout: 30s\\n'
              'database:\\n  host: db.example.com\\n  pool: 20\\n  timeout: 5s\\n'
              'cache:\\n  ttl: 300s\\n  size: 10000\\n","owner":"team-%d"}}')

EVENT = ('{"kind":"Event","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s",'
         '"uid":"00000000-0000-4000-f000-%012x","resourceVersion":"%d","creationTimestamp":'
         '"%s"},"involvedObject":{"kind":"Pod","name":"%s","namespace":"%s","uid":"%s",'
         '"apiVersion":"v1","resourceVersion":"1","fieldPath":"spec.containers{%s}"},'
         '"reason":"%s","message":"%s","source":{"component":"kubelet","host":"%s"},'
         '"firstTimestamp":"%s","lastTimestamp":"%s","count":%d,"type":"%s",'
         '"eventTime":null,"reportingComponent":"","reportingInstance":""}')
