"""A stand-in Kubernetes API server for benchmarks at scale (issue #19). Not a test double of
semantics: just enough of the API, fast and small, to hold 150,000 realistic pods.

    .venv/bin/python -m tests.bench.standin --pods 150000 --port 8701 [--churn 200]

Serves on 127.0.0.1 only, plain HTTP:

- discovery (``/api``, ``/apis``, each group version) of the kinds the gateway caches, and
  ``/version``;
- LIST of pods with ``limit``/``continue`` and a ``resourceVersion`` (the version of the first
  page, carried in the continue token), all namespaces or one; the other kinds list empty, except
  nodes (100) and namespaces (50);
- WATCH (``?watch=1``) from a version: the changes after it, BOOKMARK events every
  ``--bookmark-seconds`` to watches that asked for them (``allowWatchBookmarks``), a 410 (an ERROR
  event, as the API server sends) for a version older than the oldest change kept;
- churn at ``--churn`` changes a second (or ``POST /_standin/churn?rate=N``): each change is a
  MODIFIED pod whose restart count goes up, whose ``tier`` label changes and whose second
  container alternates between running and waiting (CrashLoopBackOff), so its display status,
  a sortable field, changes;
- ``POST /_standin/expire``: every open watch gets an ERROR 410 and ends, and versions before now
  are compacted, so every watcher must re-list; ``POST /_standin/slow?seconds=S`` delays each LIST
  page by S (to make a re-list observable); ``GET /_standin/stats``: what was served;
  ``POST /_standin/events?rate=N`` sets the composition's event rate; ``POST
  /_standin/touch?namespace=K`` changes one pod of ``ns-K`` now (bench_live's notices);
- SelfSubjectAccessReview: allowed, except for tokens starting with ``deny`` (and their LISTs
  answer 403 with the API server's kind of message); tokens starting with ``bad`` get 401;
- ``metrics.k8s.io/v1beta1`` pods and nodes (chunked), for the metrics sidecar;
- ``--composition`` (issue #30): the whole cluster beside the pods, scaled by ``--pods`` /
  150,000 (tests/bench/composition.py): replica sets with their history, 5,000 nodes with
  their images, 200,000 events of which ``--event-rate`` (50) a second are ADDED and as many
  DELETED (expired) on their watch, services, endpoint slices and config maps, all chunked.
  Without it (the default) the cluster is pods only, as the figures of issue #19 were taken.

Pods are not stored as JSON: each is a row of a few small integers (restarts, tier, ready,
resourceVersion) and its bytes are made per request from one template by ``%`` substitution,
about 5 KB each. 150,000 pods take well under 100 MB here.
"""

import argparse
import asyncio
import base64
import bisect
import json
import logging
import operator
import random
import signal
import time
from array import array

import tornado.httpserver
import tornado.iostream
import tornado.web

from tests.bench import composition, heavy

log = logging.getLogger("standin")

NAMESPACES = 50
NODES = 100
PER_SET = 20
BASE_TIME = 1700000000  # creation times: one second apart from here, in pod order
EVENT_LOG = 200000       # changes kept for watchers; older versions get a 410
WATCH_BATCH = 256        # watch lines made and written at a time (State.backlog)

CORE = [  # (plural, kind, namespaced)
    ("pods", "Pod", True), ("nodes", "Node", False), ("namespaces", "Namespace", False),
    ("events", "Event", True), ("services", "Service", True),
    ("persistentvolumeclaims", "PersistentVolumeClaim", True),
    ("configmaps", "ConfigMap", True), ("secrets", "Secret", True),
    ("persistentvolumes", "PersistentVolume", False),
    ("serviceaccounts", "ServiceAccount", True),
    ("replicationcontrollers", "ReplicationController", True),
    ("endpoints", "Endpoints", True),
]
GROUPS = {
    "apps/v1": [("deployments", "Deployment", True), ("replicasets", "ReplicaSet", True),
                ("daemonsets", "DaemonSet", True), ("statefulsets", "StatefulSet", True)],
    "batch/v1": [("jobs", "Job", True), ("cronjobs", "CronJob", True)],
    "autoscaling/v2": [("horizontalpodautoscalers", "HorizontalPodAutoscaler", True)],
    "networking.k8s.io/v1": [("ingresses", "Ingress", True),
                             ("ingressclasses", "IngressClass", False),
                             ("networkpolicies", "NetworkPolicy", True)],
    "storage.k8s.io/v1": [("storageclasses", "StorageClass", False)],
    "rbac.authorization.k8s.io/v1": [("roles", "Role", True),
                                     ("rolebindings", "RoleBinding", True),
                                     ("clusterroles", "ClusterRole", False),
                                     ("clusterrolebindings", "ClusterRoleBinding", False)],
    "policy/v1": [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    "discovery.k8s.io/v1": [("endpointslices", "EndpointSlice", True)],
    "apiextensions.k8s.io/v1": [("customresourcedefinitions", "CustomResourceDefinition",
                                 False)],
    "authorization.k8s.io/v1": [("selfsubjectaccessreviews", "SelfSubjectAccessReview",
                                 False)],
    "metrics.k8s.io/v1beta1": [("pods", "PodMetrics", True), ("nodes", "NodeMetrics", False)],
}
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]

# One pod, ~5 KB. Substitutions, in order: name, namespace, uid, resourceVersion, creation,
# app label, tier label, hash, set name, set uid, node, pod IP, restarts(1), restarts(2),
# second container's state, ready(2), ready condition, ready count... (see Pods.encode).
POD = (
    '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"%s","namespace":"%s","uid":"%s",'
    '"resourceVersion":"%d","creationTimestamp":"%s","generateName":"%s-",'
    '"labels":{"app":"%s","tier":"%s","pod-template-hash":"%s","team":"team-%d",'
    '"app.kubernetes.io/part-of":"bench","app.kubernetes.io/managed-by":"standin"},'
    '"annotations":{"kubernetes.io/psp":"restricted","prometheus.io/scrape":"true",'
    '"prometheus.io/port":"9090"},'
    '"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"%s","uid":"%s",'
    '"controller":true,"blockOwnerDeletion":true}]},'
    '"spec":{"volumes":[{"name":"config","configMap":{"name":"%s-config","defaultMode":420}},'
    '{"name":"kube-api-access","projected":{"sources":[{"serviceAccountToken":'
    '{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt",'
    '"items":[{"key":"ca.crt","path":"ca.crt"}]}}],"defaultMode":420}}],'
    '"containers":[%s,%s],'
    '"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst",'
    '"serviceAccountName":"default","serviceAccount":"default","nodeName":"%s",'
    '"securityContext":{"runAsNonRoot":true,"fsGroup":2000},"schedulerName":"default-scheduler",'
    '"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists",'
    '"effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable",'
    '"operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,'
    '"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},'
    '"status":{"phase":"Running","conditions":['
    '{"type":"Initialized","status":"True","lastProbeTime":null,'
    '"lastTransitionTime":"%s"},'
    '{"type":"Ready","status":"%s","lastProbeTime":null,"lastTransitionTime":"%s"},'
    '{"type":"ContainersReady","status":"%s","lastProbeTime":null,'
    '"lastTransitionTime":"%s"},'
    '{"type":"PodScheduled","status":"True","lastProbeTime":null,'
    '"lastTransitionTime":"%s"}],'
    '"hostIP":"10.0.%d.%d","podIP":"%s","podIPs":[{"ip":"%s"}],"startTime":"%s",'
    '"containerStatuses":[%s,%s],"qosClass":"Burstable"}}')

# A replica set's pod template: app, tier, hash, team, config map's app, two containers.
TEMPLATE = (
    '{"metadata":{"creationTimestamp":null,"labels":{"app":"%s","tier":"%s",'
    '"pod-template-hash":"%s","team":"team-%d","app.kubernetes.io/part-of":"bench",'
    '"app.kubernetes.io/managed-by":"standin"},"annotations":{"kubernetes.io/psp":'
    '"restricted","prometheus.io/scrape":"true","prometheus.io/port":"9090"}},'
    '"spec":{"volumes":[{"name":"config","configMap":{"name":"%s-config","defaultMode":420}}],'
    '"containers":[%s,%s],"restartPolicy":"Always","terminationGracePeriodSeconds":30,'
    '"dnsPolicy":"ClusterFirst","serviceAccountName":"default","securityContext":'
    '{"runAsNonRoot":true,"fsGroup":2000},"schedulerName":"default-scheduler"}}')

CONTAINER = (
    '{"name":"%s","image":"registry.example.com/bench/%s:1.%d.%d","command":["/bin/%s"],'
    '"args":["--port=%d","--log-level=info","--config=/etc/config/app.yaml"],'
    '"ports":[{"name":"http","containerPort":%d,"protocol":"TCP"}],'
    '"env":[{"name":"APP_NAME","value":"%s"},{"name":"POD_NAME","valueFrom":{"fieldRef":'
    '{"apiVersion":"v1","fieldPath":"metadata.name"}}},{"name":"POD_NAMESPACE","valueFrom":'
    '{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}},'
    '{"name":"LOG_FORMAT","value":"json"}],'
    '"resources":{"limits":{"cpu":"500m","memory":"256Mi"},'
    '"requests":{"cpu":"100m","memory":"128Mi"}},'
    '"volumeMounts":[{"name":"config","mountPath":"/etc/config","readOnly":true},'
    '{"name":"kube-api-access","mountPath":"/var/run/secrets/kubernetes.io/serviceaccount",'
    '"readOnly":true}],'
    '"livenessProbe":{"httpGet":{"path":"/healthz","port":%d,"scheme":"HTTP"},'
    '"initialDelaySeconds":10,"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,'
    '"failureThreshold":3},'
    '"readinessProbe":{"httpGet":{"path":"/ready","port":%d,"scheme":"HTTP"},'
    '"timeoutSeconds":1,"periodSeconds":5,"successThreshold":1,"failureThreshold":3},'
    '"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",'
    '"imagePullPolicy":"IfNotPresent"}')

STATUS = (
    '{"name":"%s","state":%s,"lastState":{},"ready":%s,"restartCount":%d,'
    '"image":"registry.example.com/bench/%s:1.%d.%d","imageID":"registry.example.com/bench/'
    '%s@sha256:%064x","containerID":"containerd://%064x","started":%s}')


def stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


class Pods:
    """150,000 pods as a few arrays of small integers; bytes made on demand."""

    per_set = PER_SET

    def __init__(self, n, nodes=NODES, heavy=True):
        self.n = n
        self.nodes = nodes
        self.heavy = heavy      # as a real cluster's (tests/bench/heavy.py), else issue #30's
        self._managed = None    # the pods' managedFields (heavy), made from the first pod
        self.restarts = array("H", bytes(2 * n))
        self.tier = array("B", bytes(n))
        self.waiting = array("B", bytes(n))
        self.rv = array("Q", [1] * n)
        # namespace k holds pods [starts[k], starts[k+1]): all-namespace order is pod order
        self.starts = [k * n // NAMESPACES for k in range(NAMESPACES + 1)]
        self.stamps = {}

    def namespace_of(self, i):
        k = i * NAMESPACES // self.n
        while self.starts[k + 1] <= i:
            k += 1
        while self.starts[k] > i:
            k -= 1
        return k

    def _stamp(self, seconds):
        found = self.stamps.get(seconds)
        if found is None:
            found = stamp(seconds)
            if len(self.stamps) < 1000000:
                self.stamps[seconds] = found
        return found

    def name(self, i):
        return "app-%05d-5d8f7c9b6-%06d" % (i // PER_SET, i)

    def uid(self, i):
        return "%08x-0000-4000-8000-%012x" % (i // PER_SET, i)

    def node_of(self, i):
        return "node-%03d" % (i % self.nodes)

    def ip(self, i):
        return "10.%d.%d.%d" % (1 + (i >> 16) % 250, (i >> 8) & 255, i & 255)

    def stamp_of(self, offset):
        return self._stamp(BASE_TIME + offset)

    def template(self, d, revision):
        """The pod template of app ``d``'s replica set of ``revision`` (0: the live one)."""
        app = "app-%05d" % d
        if self.heavy:
            main = heavy.CONTAINER % ("main", app, (d + revision) % 10, revision, 8080, 8080,
                                      app, 8080, 8080)
            return heavy.TEMPLATE % (app, "tier-0", "%09x" % (0x7a000000 + revision), d % 10,
                                     app, d * 7919 + revision, app, heavy.INIT, main,
                                     heavy.PROXY)
        main = CONTAINER % ("main", app, (d + revision) % 10, revision, "server", 8080, 8080,
                            app, 8080, 8080)
        side = CONTAINER % ("sidecar", "proxy", 3, 1, "proxy", 9090, 9090, app, 9090, 9090)
        return TEMPLATE % (app, "tier-0", "%09x" % (0x7a000000 + revision), d % 10, app, main,
                           side)

    def encode(self, i):
        if self.heavy:
            return self.encode_heavy(i)
        ns = "ns-%02d" % self.namespace_of(i)
        d = i // PER_SET
        app = "app-%05d" % d
        rs = app + "-5d8f7c9b6"
        name = "%s-%06d" % (rs, i)
        created = self._stamp(BASE_TIME + i)
        restarts = self.restarts[i]
        waiting = self.waiting[i]
        node = self.node_of(i)
        ip = self.ip(i)
        ready = "false" if waiting else "true"
        cond = "False" if waiting else "True"
        main = CONTAINER % ("main", app, d % 10, i % 7, "server", 8080, 8080, app, 8080, 8080)
        side = CONTAINER % ("sidecar", "proxy", 3, 1, "proxy", 9090, 9090, app, 9090, 9090)
        running = '{"running":{"startedAt":"%s"}}' % created
        second = ('{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s '
                  'restarting failed container"}}' if waiting else running)
        s1 = STATUS % ("main", running, "true", restarts // 2, app, d % 10, i % 7, app,
                       i * 7919, i * 104729, "true")
        s2 = STATUS % ("sidecar", second, ready, restarts - restarts // 2, "proxy", 3, 1,
                       "proxy", i * 15485863, i * 32452843 + 1, ready)
        return POD % (
            name, ns, "%08x-0000-4000-8000-%012x" % (d, i), self.rv[i], created, rs,
            app, "tier-%d" % self.tier[i], "5d8f7c9b6", d % 10,
            rs, "%08x-0000-4000-9000-%012x" % (d, d), app,
            main, side, node,
            created, cond, created, cond, created, created,
            i % self.nodes // 256, i % self.nodes % 256 + 1, ip, ip, created, s1, s2)

    def encode_heavy(self, i, managed=None):
        """Pod ``i`` as a real cluster's (tests/bench/heavy.py): ~8 KB."""
        if managed is None:
            if self._managed is None:
                sample = json.loads(self.encode_heavy(0, "[]"))
                self._managed = heavy.managed_fields(sample, heavy.WRITERS["pod"], depth=2)
            managed = self._managed
        ns = "ns-%02d" % self.namespace_of(i)
        d = i // PER_SET
        app = "app-%05d" % d
        rs = app + "-5d8f7c9b6"
        created = self._stamp(BASE_TIME + i)
        restarts = self.restarts[i]
        waiting = self.waiting[i]
        ip = self.ip(i)
        ready = "false" if waiting else "true"
        cond = "False" if waiting else "True"
        main = heavy.CONTAINER % ("main", app, d % 10, i % 7, 8080, 8080, app, 8080, 8080)
        running = '{"running":{"startedAt":"%s"}}' % created
        second = ('{"waiting":{"reason":"CrashLoopBackOff","message":"back-off 5m0s '
                  'restarting failed container"}}' if waiting else running)
        last = heavy.LAST_TERMINATED % (created, created, i * 48611) if restarts else "{}"
        s1 = heavy.STATUS % ("main", running, "{}", "true", restarts // 2, "bench/" + app,
                             d % 10, i % 7, "bench/" + app, i * 7919, i * 104729, "true")
        s2 = heavy.STATUS % ("istio-proxy", second, last, ready, restarts - restarts // 2,
                             "istio/proxyv2", 19, 3, "istio/proxyv2", 15485863,
                             i * 32452843 + 1, ready)
        init = heavy.INIT_STATUS % (created, created, i * 86028121, 99991, i * 2750159)
        return heavy.POD % (
            "%s-%06d" % (rs, i), ns, "%08x-0000-4000-8000-%012x" % (d, i), self.rv[i],
            created, rs, app, "tier-%d" % self.tier[i], "5d8f7c9b6", d % 10, app, app,
            d * 7919, ip, ip, rs, "%08x-0000-4000-9000-%012x" % (d, d), managed, app,
            heavy.INIT, main, heavy.PROXY, self.node_of(i),
            created, cond, created, cond, created, created,
            i % self.nodes // 256, i % self.nodes % 256 + 1, ip, ip, created, init, s1, s2)

    def change(self, i, rv):
        self.restarts[i] = min(60000, self.restarts[i] + 1)
        self.tier[i] = (self.tier[i] + 1) % 5
        self.waiting[i] ^= 1
        self.rv[i] = rv

    def metrics(self, i):
        ns = "ns-%02d" % self.namespace_of(i)
        return ('{"metadata":{"name":"%s","namespace":"%s","creationTimestamp":"%s"},'
                '"timestamp":"%s","window":"30s","containers":['
                '{"name":"main","usage":{"cpu":"%dn","memory":"%dKi"}},'
                '{"name":"sidecar","usage":{"cpu":"%dn","memory":"%dKi"}}]}'
                % (self.name(i), ns, stamp(time.time()), stamp(time.time()),
                   1000000 + i % 5000 * 1000, 50000 + i % 300, 200000 + i % 100, 20000))


def node_json(k, rv):
    name = "node-%03d" % k
    return ('{"metadata":{"name":"%s","uid":"00000000-0000-4000-a000-%012x",'
            '"resourceVersion":"%d","creationTimestamp":"%s","labels":'
            '{"kubernetes.io/hostname":"%s","kubernetes.io/os":"linux"}},'
            '"spec":{"podCIDR":"10.244.%d.0/24"},"status":{"capacity":{"cpu":"64",'
            '"memory":"262144Mi","pods":"2000"},"allocatable":{"cpu":"63","memory":"260000Mi",'
            '"pods":"2000"},"conditions":[{"type":"Ready","status":"True","reason":'
            '"KubeletReady","lastHeartbeatTime":"%s","lastTransitionTime":"%s"}],'
            '"addresses":[{"type":"InternalIP","address":"10.0.0.%d"}],"nodeInfo":'
            '{"kubeletVersion":"v1.20.2","osImage":"Debian","containerRuntimeVersion":'
            '"containerd://1.4","architecture":"amd64","operatingSystem":"linux"}}}'
            % (name, k, rv, stamp(BASE_TIME), name, k, stamp(BASE_TIME), stamp(BASE_TIME),
               k + 1))


def namespace_json(k, rv):
    return ('{"metadata":{"name":"ns-%02d","uid":"00000000-0000-4000-b000-%012x",'
            '"resourceVersion":"%d","creationTimestamp":"%s"},"spec":{"finalizers":'
            '["kubernetes"]},"status":{"phase":"Active"}}' % (k, k, rv, stamp(BASE_TIME)))


class State:
    """``composed``: the rest of the cluster too (tests/bench/composition.py), else pods only
    (with 100 nodes and 50 namespaces)."""

    def __init__(self, n, churn=0.0, bookmark_seconds=5.0, composed=False,
                 event_rate=composition.EVENT_RATE, heavy=True):
        sizes = composition.counts(n) if composed else None
        self.pods = Pods(n, sizes["nodes"] if composed else NODES, heavy)
        self.composition = composition.Composition(self.pods, sizes["nodes"], event_rate,
                                                   sizes) if composed else None
        self.version = 1000
        self.oldest = 1000        # versions before this are compacted (410)
        self.log = []             # [(rv, plural, event type, index)], oldest first
        self.churn = churn
        self.bookmark_seconds = bookmark_seconds
        self.page_delay = 0.0
        self.changed = asyncio.Event()
        self.watches = set()      # open watch handlers
        self.stats = {"list_pages": 0, "list_bytes": 0, "pod_lists_completed": 0,
                      "pod_list_pages": 0, "watches": 0, "watches_with_bookmarks": 0,
                      "bookmarks_sent": 0, "gone_sent": 0, "changes": 0, "expired": 0,
                      "access_reviews": 0, "refused": 0, "metrics_pages": 0,
                      "event_changes": 0, "lists_completed": {}}
        self.started = time.time()

    def next_version(self):
        self.version += 1
        return self.version

    def tick(self, count, seconds=0.0):
        """``count`` pod changes, and ``seconds`` of the composition's event churn."""
        pods = self.pods
        for _ in range(max(0, count)):
            self.version += 1
            i = random.randrange(pods.n)
            pods.change(i, self.version)
            self.log.append((self.version, "pods", "MODIFIED", i))
        self.stats["changes"] += max(0, count)
        changes = ()
        if self.composition is not None and seconds:
            changes = self.composition.tick_events(seconds, self.next_version)
            self.log += changes
            self.stats["event_changes"] += len(changes)
        if len(self.log) > EVENT_LOG:
            drop = len(self.log) - EVENT_LOG
            self.oldest = self.log[drop - 1][0]
            del self.log[:drop]
        if count > 0 or changes:
            self.wake()

    def touch(self, k):
        """One pod of namespace ``ns-{k:02d}`` changed now (bench_live's probe of notices)."""
        pods = self.pods
        k = max(0, min(NAMESPACES - 1, k))
        if pods.starts[k + 1] <= pods.starts[k]:
            return
        self.version += 1
        i = random.randrange(pods.starts[k], pods.starts[k + 1])
        pods.change(i, self.version)
        self.log.append((self.version, "pods", "MODIFIED", i))
        self.stats["changes"] += 1
        self.wake()

    def backlog(self, cursor, plural, batch=WATCH_BATCH):
        """The changes of ``plural`` (pods, or the composition's events) after version
        ``cursor``, as watch lines, ``batch`` lines at a time: (the version they reach, their
        text). A watch from a LIST's version has the LIST's minute of churn to catch up (14,000
        heavy pods at 200 changes a second, 70 MB): made and written in one step, they held the
        stand-in's one loop for up to 1.3 s, and the gateway's first requests after ready waited
        that long for their access reviews (issue #41). An API server streams a backlog while it
        serves other requests; so does the stand-in, a batch at a time."""
        changes = self.log
        lines = []
        for rv, what, kind, i in changes[bisect.bisect_right(changes, cursor,
                                                             key=operator.itemgetter(0)):]:
            if what == plural:
                obj = self.pods.encode(i) if plural == "pods" else self.composition.event(i)
                lines.append('{"type":"%s","object":%s}\n' % (kind, obj))
            cursor = rv
            if len(lines) >= batch:
                yield cursor, "".join(lines)
                lines = []
        yield cursor, "".join(lines)

    def wake(self):
        self.changed.set()
        self.changed = asyncio.Event()

    def expire(self):
        self.version += 1
        self.oldest = self.version
        self.log = []
        self.stats["expired"] += 1
        for watch in list(self.watches):
            watch.gone = True
        self.wake()

    async def churn_loop(self):
        carry = 0.0
        period = 0.05
        while True:
            await asyncio.sleep(period)
            carry += self.churn * period
            count = int(carry)
            carry -= count
            self.tick(count, period)


def status_body(code, reason, message):
    return json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {},
                       "status": "Failure", "message": message, "reason": reason,
                       "code": code})


def encode_token(rv, start):
    return base64.urlsafe_b64encode(json.dumps([rv, start]).encode()).decode()


def decode_token(text):
    try:
        rv, start = json.loads(base64.urlsafe_b64decode(text.encode()))
        return int(rv), int(start)
    except Exception:
        raise ValueError("bad continue token")


class Base(tornado.web.RequestHandler):
    def initialize(self, state):
        self.state = state

    def token(self):
        header = self.request.headers.get("Authorization", "")
        return header[7:] if header.startswith("Bearer ") else ""

    def fail(self, code, reason, message):
        self.set_status(code)
        self.set_header("Content-Type", "application/json")
        self.finish(status_body(code, reason, message))

    def authenticated(self):
        token = self.token()
        if not token or token.startswith("bad"):
            self.fail(401, "Unauthorized", "Unauthorized")
            return False
        return True

    def user(self):
        return "system:serviceaccount:bench:" + self.token()[:20]

    def send_json(self, text):
        self.set_header("Content-Type", "application/json")
        self.finish(text)


class Discovery(Base):
    def get(self, path):
        if not self.authenticated():
            return
        path = "/" + path.strip("/")
        if path == "/version":
            return self.send_json('{"major":"1","minor":"20","gitVersion":"v1.20.2-standin"}')
        if path == "/api":
            return self.send_json('{"kind":"APIVersions","versions":["v1"]}')
        if path == "/apis":
            groups = {}
            for gv in GROUPS:
                group, version = gv.split("/")
                groups.setdefault(group, []).append(version)
            return self.send_json(json.dumps({"kind": "APIGroupList", "apiVersion": "v1",
                                              "groups": [{
                "name": g, "versions": [{"groupVersion": g + "/" + v, "version": v}
                                        for v in vs],
                "preferredVersion": {"groupVersion": g + "/" + vs[0], "version": vs[0]}}
                for g, vs in groups.items()]}))
        if path == "/api/v1":
            return self.send_json(resource_list("v1", CORE))
        if path.startswith("/apis/") and path[6:] in GROUPS:
            return self.send_json(resource_list(path[6:], GROUPS[path[6:]]))
        self.fail(404, "NotFound", "the server could not find the requested resource")


def resource_list(gv, resources):
    out = [{"name": p, "singularName": "", "namespaced": ns, "kind": k, "verbs": VERBS}
           for p, k, ns in resources]
    if gv == "v1":
        out += [{"name": "pods/log", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
                {"name": "pods/status", "namespaced": True, "kind": "Pod", "verbs": ["get"]}]
    return json.dumps({"kind": "APIResourceList", "groupVersion": gv, "resources": out})


class Collection(Base):
    """GET of a collection (LIST or WATCH) or of one object, for every served path."""

    async def get(self, prefix, namespace, plural, name):
        if not self.authenticated():
            return
        state = self.state
        if self.token().startswith("deny"):
            state.stats["refused"] += 1
            scope = (' in the namespace "%s"' % namespace) if namespace else \
                " at the cluster scope"
            group = prefix.split("/")[1] if prefix.startswith("apis/") else ""
            return self.fail(403, "Forbidden", '%s is forbidden: User "%s" cannot list resource '
                             '"%s" in API group "%s"%s' % (plural, self.user(), plural, group,
                                                           scope))
        if name:
            if plural == "pods" and prefix == "api/v1" and namespace:
                return self.one_pod(namespace, name)
            return self.fail(404, "NotFound", '%s "%s" not found' % (plural, name))
        if self.get_argument("watch", "") in ("1", "true"):
            return await self.watch(prefix, plural)
        if prefix == "apis/metrics.k8s.io/v1beta1":
            return self.metrics(namespace, plural)
        if prefix == "api/v1" and plural == "pods":
            return await self.list_pods(namespace)
        if state.composition is not None and plural in composition.ENCODERS:
            return await self.list_composed(plural, namespace)
        rv = state.version
        if prefix == "api/v1" and plural == "nodes":
            items = [node_json(k, 10 + k) for k in range(NODES)]
        elif prefix == "api/v1" and plural == "namespaces":
            items = [namespace_json(k, 10 + k) for k in range(NAMESPACES)]
        else:
            items = []
        self.send_json('{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"%d"},'
                       '"items":[%s]}' % (rv, ",".join(items)))

    def one_pod(self, namespace, name):
        pods = self.state.pods
        try:
            i = int(name.rsplit("-", 1)[1])
        except (IndexError, ValueError):
            i = -1
        if not 0 <= i < pods.n or pods.name(i) != name or \
                "ns-%02d" % pods.namespace_of(i) != namespace:
            return self.fail(404, "NotFound", 'pods "%s" not found' % name)
        self.send_json(pods.encode(i))

    def _range(self, namespace):
        pods = self.state.pods
        if not namespace:
            return 0, pods.n
        try:
            k = int(namespace[3:]) if namespace.startswith("ns-") else -1
        except ValueError:
            k = -1
        if not 0 <= k < NAMESPACES:
            return 0, 0
        return pods.starts[k], pods.starts[k + 1]

    def _page(self, namespace):
        """(first, end, snapshot rv, next start or None) of this page; raises ValueError."""
        state = self.state
        first, end = self._range(namespace)
        token = self.get_argument("continue", "")
        rv = state.version
        start = first
        if token:
            rv, start = decode_token(token)
            if rv < state.oldest:
                raise LookupError()
        limit = int(self.get_argument("limit", "0") or 0)
        stop = end if limit <= 0 else min(end, start + limit)
        return start, stop, rv, (stop if stop < end else None), end

    async def list_pods(self, namespace):
        state = self.state
        try:
            start, stop, rv, following, end = self._page(namespace)
        except LookupError:
            return self.fail(410, "Expired", "The provided continue parameter is too old to "
                             "display a consistent list result. You can start a new list "
                             "without the continue parameter.")
        except ValueError as exc:
            return self.fail(400, "BadRequest", str(exc))
        if state.page_delay:
            await asyncio.sleep(state.page_delay)
        pods = state.pods
        meta = '"resourceVersion":"%d"' % rv
        if following is not None:
            meta += ',"continue":"%s","remainingItemCount":%d' % (
                encode_token(rv, following), end - following)
        body = ('{"kind":"PodList","apiVersion":"v1","metadata":{%s},"items":[%s]}'
                % (meta, ",".join(pods.encode(i) for i in range(start, stop)))).encode()
        state.stats["list_pages"] += 1
        state.stats["pod_list_pages"] += 1
        state.stats["list_bytes"] += len(body)
        if following is None and not namespace:
            state.stats["pod_lists_completed"] += 1
        self.set_header("Content-Type", "application/json")
        self.finish(body)

    async def list_composed(self, plural, namespace):
        """A LIST of one of the composition's kinds, chunked as pods are; the events of one
        namespace are found by a scan (the gateway lists every namespace at once)."""
        state = self.state
        comp = state.composition
        token = self.get_argument("continue", "")
        rv = state.version
        try:
            limit = int(self.get_argument("limit", "0") or 0)
            if token:
                rv, start = decode_token(token)
        except ValueError as exc:
            return self.fail(400, "BadRequest", str(exc))
        if token and rv < state.oldest:
            return self.fail(410, "Expired", "The provided continue parameter is too old to "
                             "display a consistent list result.")
        if state.page_delay:
            await asyncio.sleep(state.page_delay)
        order = None
        if plural == "events":
            order = comp.events_in_key_order(rv)
            first, end = 0, len(order)
            wanted = namespace or None
        else:
            blocks, count = comp.table(plural)
            first, end, wanted = 0, count, None
            if namespace and blocks is not None:
                k = int(namespace[3:]) if namespace[3:].isdigit() else -1
                first, end = (blocks.starts[k], blocks.starts[k + 1]) \
                    if 0 <= k < len(blocks.starts) - 1 else (0, 0)
        start = max(first, start) if token else first
        items, i = [], start
        while i < end and (limit <= 0 or len(items) < limit):
            text = comp.encode(plural, i if order is None else order[i])
            if wanted is None or ('"namespace":"%s"' % wanted) in text[:300]:
                items.append(text)
            i += 1
        meta = '"resourceVersion":"%d"' % rv
        if i < end:
            meta += ',"continue":"%s","remainingItemCount":%d' % (encode_token(rv, i), end - i)
        else:
            done = state.stats["lists_completed"]
            done[plural] = done.get(plural, 0) + 1
        body = ('{"kind":"List","apiVersion":"v1","metadata":{%s},"items":[%s]}'
                % (meta, ",".join(items))).encode()
        state.stats["list_pages"] += 1
        state.stats["list_bytes"] += len(body)
        self.set_header("Content-Type", "application/json")
        self.finish(body)

    def metrics(self, namespace, plural):
        state = self.state
        state.stats["metrics_pages"] += 1
        now = stamp(time.time())
        if plural == "nodes":
            items = ['{"metadata":{"name":"node-%03d"},"timestamp":"%s","window":"30s",'
                     '"usage":{"cpu":"%dn","memory":"%dKi"}}'
                     % (k, now, 2000000000 + k, 50000000 + k) for k in range(NODES)]
            return self.send_json('{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/'
                                  'v1beta1","metadata":{},"items":[%s]}' % ",".join(items))
        try:
            start, stop, rv, following, end = self._page(namespace)
        except (LookupError, ValueError) as exc:
            return self.fail(400, "BadRequest", str(exc) or "bad continue")
        meta = ('"continue":"%s"' % encode_token(rv, following)) if following is not None \
            else ""
        self.send_json('{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1",'
                       '"metadata":{%s},"items":[%s]}'
                       % (meta, ",".join(state.pods.metrics(i) for i in range(start, stop))))

    async def watch(self, prefix, plural):
        state = self.state
        stats = state.stats
        stats["watches"] += 1
        bookmarks = self.get_argument("allowWatchBookmarks", "") in ("1", "true")
        if bookmarks:
            stats["watches_with_bookmarks"] += 1
        try:
            since = int(self.get_argument("resourceVersion", "0") or 0)
        except ValueError:
            return self.fail(400, "BadRequest", "bad resourceVersion")
        timeout = float(self.get_argument("timeoutSeconds", "1800") or 1800)
        deadline = time.monotonic() + min(timeout, 1800)
        pods = prefix == "api/v1" and plural == "pods"
        logged = plural if pods or (plural == "events" and state.composition) else None
        self.gone = False
        self.set_header("Content-Type", "application/json")
        if since and since < state.oldest:
            stats["gone_sent"] += 1
            self.finish(_gone(since))
            return
        state.watches.add(self)
        cursor = since
        last_bookmark = time.monotonic()
        try:
            self.flush()
            while time.monotonic() < deadline:
                if self.gone:
                    stats["gone_sent"] += 1
                    self.write(_gone(cursor))
                    break
                if logged and state.log and state.log[-1][0] > cursor:
                    for cursor, text in state.backlog(cursor, logged):
                        if text:
                            self.write(text)
                            await self.flush()
                        await asyncio.sleep(0)   # a flush taken whole by the socket never yields
                if bookmarks and time.monotonic() - last_bookmark >= state.bookmark_seconds:
                    last_bookmark = time.monotonic()
                    cursor = max(cursor, state.version)
                    stats["bookmarks_sent"] += 1
                    self.write('{"type":"BOOKMARK","object":{"kind":"%s","apiVersion":"v1",'
                               '"metadata":{"resourceVersion":"%d"}}}\n'
                               % ("Pod" if pods else "Object", cursor))
                    await self.flush()
                changed = state.changed
                try:
                    await asyncio.wait_for(changed.wait(), timeout=min(
                        1.0, max(0.05, deadline - time.monotonic())))
                except asyncio.TimeoutError:
                    pass
        except tornado.iostream.StreamClosedError:
            return
        finally:
            state.watches.discard(self)
        if not self._finished:
            self.finish()

    def on_connection_close(self):
        self.state.watches.discard(self)
        self.gone = True


def _gone(rv):
    return ('{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},'
            '"status":"Failure","message":"too old resource version: %d","reason":"Expired",'
            '"code":410}}\n' % rv)


class AccessReview(Base):
    def post(self):
        if not self.authenticated():
            return
        self.state.stats["access_reviews"] += 1
        try:
            spec = json.loads(self.request.body or b"{}").get("spec") or {}
        except ValueError:
            return self.fail(400, "BadRequest", "bad body")
        allowed = not self.token().startswith("deny")
        self.set_status(201)
        self.send_json(json.dumps({
            "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
            "metadata": {}, "spec": spec,
            "status": {"allowed": allowed} if allowed else
            {"allowed": False, "reason": "the stand-in refuses tokens starting with deny"}}))


class Admin(Base):
    def post(self, what):
        state = self.state
        if what == "expire":
            state.expire()
        elif what == "churn":
            state.churn = float(self.get_argument("rate", "0"))
        elif what == "events" and state.composition is not None:
            state.composition.event_rate = float(self.get_argument("rate", "0"))
        elif what == "touch":
            state.touch(int(self.get_argument("namespace", "0")))
        elif what == "slow":
            state.page_delay = float(self.get_argument("seconds", "0"))
        elif what == "bookmarks":
            state.bookmark_seconds = float(self.get_argument("seconds", "5"))
        else:
            return self.fail(404, "NotFound", "no such admin action")
        self.send_json(json.dumps({"ok": True, "version": state.version}))

    def get(self, what):
        if what != "stats":
            return self.fail(404, "NotFound", "no such admin page")
        state = self.state
        stats = dict(state.stats, version=state.version, churn=state.churn,
                     open_watches=len(state.watches), pods=state.pods.n,
                     composition=state.composition.sizes if state.composition else None)
        self.send_json(json.dumps(stats))


def make_app(state):
    args = {"state": state}
    ns = r"(?:namespaces/([^/]+)/)?"
    return tornado.web.Application([
        (r"/_standin/(\w+)", Admin, args),
        (r"/apis/authorization\.k8s\.io/v1/selfsubjectaccessreviews", AccessReview, args),
        (r"/(api/v1|apis/[^/]+/[^/]+)/" + ns + r"([a-z]+)(?:/([^/]+))?", Collection, args),
        (r"/(version|api|apis|api/v1|apis/[^/]+/[^/]+)/?", Discovery, args),
    ])


async def serve(args):
    state = State(args.pods, args.churn, args.bookmark_seconds, args.composition,
                  args.event_rate, heavy=not args.light)
    server = tornado.httpserver.HTTPServer(make_app(state), max_buffer_size=1 << 24)
    server.listen(args.port, "127.0.0.1")
    log.info("stand-in API server: %d pods on http://127.0.0.1:%d", args.pods, args.port)
    print("READY", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    churn = asyncio.ensure_future(state.churn_loop())
    limit = args.max_seconds
    try:
        await asyncio.wait_for(stop.wait(), timeout=limit) if limit else await stop.wait()
    except asyncio.TimeoutError:
        log.warning("stand-in stops after --max-seconds %s", limit)
    churn.cancel()
    server.stop()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--churn", type=float, default=0.0, help="changes a second")
    parser.add_argument("--bookmark-seconds", type=float, default=5.0)
    parser.add_argument("--light", action="store_true",
                        help="issue #30's lighter objects (no managedFields, no mesh proxy), "
                             "for comparison; the default is as heavy as a real cluster's "
                             "(tests/bench/heavy.py)")
    parser.add_argument("--composition", action="store_true",
                        help="the whole cluster of issue #30 beside the pods (scaled by --pods "
                             "/ 150,000), not pods only")
    parser.add_argument("--event-rate", type=float, default=composition.EVENT_RATE,
                        help="with --composition: new (and as many expiring) events a second")
    parser.add_argument("--max-seconds", type=float, default=3600.0,
                        help="stop after this long, whatever happens (0: never)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="standin %(levelname)s %(message)s")
    asyncio.run(serve(args))


if __name__ == "__main__":
    main()
