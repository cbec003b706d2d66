"""LocalCluster: a real Kubernetes 1.20 control plane on 127.0.0.1 for tests and the demo.

etcd + kube-apiserver + kube-controller-manager + kube-scheduler, plus the node simulator
and the metrics stand-in (tests/cluster/nodesim, tests/cluster/metrics_standin). Free ports
are picked at start, state lives in a temporary directory, every process is stopped by PID.
"""
import atexit
import base64
import json
import os
import secrets
import shutil
import sys
import tempfile
import time
from pathlib import Path

import urllib3

from tests.cluster import pki as pkimod
from tests.cluster import users
from tests.cluster.procs import Process, free_ports
from tests.cluster.rest import Rest
from tests.support.waiting import wait_for

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CACHE = Path.home() / ".cache" / "dashboard-api" / "kube-1.20.2"
ETCD = "/usr/bin/etcd"
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
# Temporary directories are named after the owning PID so stale ones can be recognised.
STATE_PREFIX = "dashboard-cluster-"
ETCD_PREFIX = "dashboard-etcd-"
KEEP_MARKER = "KEEP"
START_TIMEOUT = float(os.environ.get("DASHBOARD_CLUSTER_START_TIMEOUT", "120"))

# No nodelifecycle: simulated nodes must not be tainted or evicted behind the simulator's back.
# No podgc: tests bind pods to a node that does not exist ("no-such-node") to keep them Pending.
# Once podgc has found that node missing past its 40 s quarantine (early in a session), it
# deletes every pod bound to it at its next pass (every 20 s), so a test lost its pod whenever a
# pass fell between its seeding and its checks. Nothing here relies on podgc otherwise.
CONTROLLERS = [
    "deployment", "replicaset", "job", "cronjob", "statefulset", "daemonset",
    "replicationcontroller", "namespace", "garbagecollector", "serviceaccount",
    "serviceaccount-token", "endpoint", "endpointslice", "disruption",
    "resourcequota", "clusterrole-aggregation", "persistentvolume-binder",
    "pvc-protection", "pv-protection", "root-ca-cert-publisher", "ttl",
]

# Created with dryRun=All to learn whether a namespace accepts pods yet.
_DRY_RUN_POD = {"metadata": {"name": "readiness-probe"},
                "spec": {"containers": [{"name": "probe", "image": "busybox"}]}}


class ClusterStartError(Exception):
    pass


def kube_bin_dir():
    cache = os.environ.get("DASHBOARD_KUBE_CACHE")
    return Path(cache) if cache else DEFAULT_CACHE


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def _sweep_stale_state():
    """Remove directories of clusters whose owner died without stop() (SIGKILL, or a
    SIGTERM that skips atexit); their processes already got SIGTERM from the kernel."""
    for base, prefix in ((tempfile.gettempdir(), STATE_PREFIX), ("/dev/shm", ETCD_PREFIX)):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            owner = name[len(prefix):].split("-")[0]
            if not name.startswith(prefix) or not owner.isdigit() or _alive(int(owner)):
                continue
            path = os.path.join(base, name)
            if not os.path.exists(os.path.join(path, KEEP_MARKER)):
                shutil.rmtree(path, ignore_errors=True)


def _child_env():
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)  # every component gets its own explicit kubeconfig
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _read_json_file(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _node_ready(node):
    for cond in node.get("status", {}).get("conditions", []):
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


class LocalCluster:
    editor_namespace = "team-a"

    def __init__(self, nodes, apiserver_flags=()):
        self.node_count = nodes
        # Flags added to the API server's (e.g. its --oidc-* flags: tests/oidc/).
        self.apiserver_flags = list(apiserver_flags)
        _sweep_stale_state()
        self.state_dir = tempfile.mkdtemp(prefix=f"{STATE_PREFIX}{os.getpid()}-")
        self._etcd_dir = None
        self._procs = []
        self._rest = None
        self._stopped = False
        self._deadline = None
        self._tokens = {}
        self._nodesim_ready_file = os.path.join(self.state_dir, "nodesim.json")
        self._metrics_ready_file = os.path.join(self.state_dir, "metrics.json")
        self.pki = None
        self.admin_token_file = os.path.join(self.state_dir, "admin.token")
        self.url = None
        self.ca_file = None
        self.kubeconfig = None
        self.metrics_url = None
        self.nodes = []
        self.kubelet_ports = {}
        self.nodesim_log_dir = None
        self.nodesim_state_dir = os.path.join(self.state_dir, "nodesim")
        self.start_seconds = None
        self.timings = {}

    # ---- lifecycle -------------------------------------------------------------

    @classmethod
    def start(cls, nodes=2, timeout=START_TIMEOUT, apiserver_flags=()):
        """Start everything and wait until it is usable; raises ClusterStartError.
        ``apiserver_flags`` are added to the API server's own."""
        for attempt in (1, 2):
            cluster = cls(nodes, apiserver_flags)
            atexit.register(cluster.stop)
            try:
                cluster._start(timeout)
                return cluster
            except ClusterStartError as e:
                # Free ports are only free when picked; someone may grab one before use.
                retry = attempt == 1 and "address already in use" in str(e)
                cluster.stop(keep_state=bool(cluster._procs) and not retry)  # logs to read
                if retry:
                    continue
                raise
            except BaseException as e:
                cluster.stop(keep_state=not isinstance(e, KeyboardInterrupt))
                raise

    def stop(self, keep_state=False):
        """Stop every component (reverse start order) by PID; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        for proc in reversed(self._procs):
            # Nothing of a stopped cluster is kept but its logs (its etcd is deleted below):
            # the API server's graceful shutdown, 1.5 s after it stopped listening, buys
            # nothing here (restart_apiserver keeps it).
            proc.stop(grace=0.2 if proc.name == "kube-apiserver" else 10.0)
        if self._rest:
            self._rest.close()
        if self._etcd_dir:
            shutil.rmtree(self._etcd_dir, ignore_errors=True)
        if keep_state or os.environ.get("DASHBOARD_KEEP_CLUSTER_STATE"):
            with open(os.path.join(self.state_dir, KEEP_MARKER), "w"):
                pass  # spares it from the sweep of stale directories
        else:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def _start(self, timeout):
        t0 = time.monotonic()
        self._deadline = t0 + timeout
        bins = self._check_prerequisites()
        self.pki = pkimod.create(os.path.join(self.state_dir, "pki"))
        self.ca_file = self.pki.ca_cert
        self._tokens = users.new_tokens()
        token_file = os.path.join(self.state_dir, "tokens.csv")
        users.write_token_file(token_file, self._tokens)
        users.write_secret(self.admin_token_file, self.admin_token)

        etcd_client, etcd_peer, api_port = free_ports(3)
        self.url = f"https://127.0.0.1:{api_port}"
        self._rest = Rest(self.url, self.ca_file, self.admin_token)
        self.kubeconfig = os.path.join(self.state_dir, "admin.kubeconfig")
        users.write_kubeconfig(self.kubeconfig, self.url, self.ca_file, "admin", self.admin_token)

        self._start_etcd(etcd_client, etcd_peer)
        self._start_apiserver(bins, api_port, f"http://127.0.0.1:{etcd_client}", token_file)
        self._wait("apiserver /readyz", self._apiserver_ready, "kube-apiserver")
        self._mark("apiserver ready", t0)

        self._start_controller_manager(bins)
        self._start_scheduler(bins)
        self._start_nodesim()
        self._start_metrics()
        self._create_editor_binding()

        self._wait("the `edit` ClusterRole to be aggregated", self._edit_role_aggregated,
                   "kube-controller-manager")
        self._wait(f"namespace {self.editor_namespace} to accept pods",
                   lambda: self._status(f"/api/v1/namespaces/{self.editor_namespace}/pods",
                                        "POST", _DRY_RUN_POD, {"dryRun": "All"}) == 201,
                   "kube-controller-manager")
        self._wait("the node simulator's ready-file", self._nodesim_ready, "nodesim")
        self._wait("nodes Ready", self._nodes_ready, "nodesim")
        self._wait("the metrics stand-in's ready-file", self._metrics_ready, "metrics")
        self._mark("ready", t0)
        self.start_seconds = round(time.monotonic() - t0, 2)

    def _mark(self, what, t0):
        self.timings[what] = round(time.monotonic() - t0, 2)

    # ---- components ------------------------------------------------------------

    def _check_prerequisites(self):
        bins = kube_bin_dir() / "bin"
        needed = [bins / b for b in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")]
        needed.append(Path(ETCD))
        missing = [str(p) for p in needed if not os.access(p, os.X_OK)]
        if missing:
            raise ClusterStartError(
                "missing binaries: " + ", ".join(missing)
                + " (run tests/cluster/build-binaries.sh; etcd comes from Debian's etcd-server)")
        for module in ("nodesim/__main__.py", "metrics_standin.py"):
            if not (REPO_ROOT / "tests" / "cluster" / module).exists():
                raise ClusterStartError(f"tests/cluster/{module} is missing: cannot start "
                                        "the node simulator / metrics stand-in")
        return bins

    def _spawn(self, name, argv, env=None):
        log = os.path.join(self.state_dir, f"{name}.log")
        try:
            proc = Process(name, argv, log, env=env, cwd=str(REPO_ROOT))
        except OSError as e:
            raise ClusterStartError(f"cannot start {name}: {e}") from e
        self._procs.append(proc)
        return proc

    def restart_apiserver(self, timeout=60):
        """Stops the API server by PID and starts it again with the same arguments and etcd,
        for clients that must survive a restart; returns once it is ready again."""
        old = next(p for p in self._procs if p.name == "kube-apiserver")
        # SIGTERM: it stops listening at once, then drains; kube-apiserver 1.20 keeps the
        # watches of clients open through that until it is killed, which a grace of 10 s
        # made a 10 s wait each time. 3 s of refused connections, then the cut, is the same
        # restart to a client.
        old.stop(grace=3.0)
        self._procs.remove(old)
        self._spawn("kube-apiserver", old.popen.args)
        self.wait_for(self._apiserver_ready, timeout, what="the API server after a restart")

    def _start_etcd(self, client_port, peer_port):
        # etcd fsyncs a lot while the apiserver bootstraps: keep its data in RAM when possible.
        base = "/dev/shm" if os.access("/dev/shm", os.W_OK) else self.state_dir
        self._etcd_dir = tempfile.mkdtemp(prefix=f"{ETCD_PREFIX}{os.getpid()}-", dir=base)
        client = f"http://127.0.0.1:{client_port}"
        peer = f"http://127.0.0.1:{peer_port}"
        self._spawn("etcd", [
            ETCD, "--name=local", f"--data-dir={self._etcd_dir}",
            f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=local={peer}", "--initial-cluster-state=new",
            "--logger=zap", "--log-outputs=stderr",
        ])

    def _start_apiserver(self, bins, port, etcd_url, token_file):
        p = self.pki
        self._spawn("kube-apiserver", [
            str(bins / "kube-apiserver"),
            f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={port}", "--insecure-port=0",
            f"--cert-dir={self.state_dir}/apiserver-certs",
            f"--tls-cert-file={p.apiserver_cert}", f"--tls-private-key-file={p.apiserver_key}",
            f"--client-ca-file={p.ca_cert}",
            f"--token-auth-file={token_file}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-key-file={p.sa_public_key}",
            f"--service-account-signing-key-file={p.sa_private_key}",
            f"--service-account-issuer={SA_ISSUER}",
            f"--kubelet-client-certificate={p.kubelet_client_cert}",
            f"--kubelet-client-key={p.kubelet_client_key}",
            "--kubelet-preferred-address-types=InternalIP",
            "--service-cluster-ip-range=10.96.0.0/12",
            # Endpoints may not hold loopback addresses, so the `kubernetes` service
            # gets no endpoints rather than an error every reconcile.
            "--endpoint-reconciler-type=none",
            "--allow-privileged=true", "--profiling=false",
        ] + self.apiserver_flags)

    def _component_kubeconfig(self, user):
        path = os.path.join(self.state_dir, f"{user.split(':')[-1]}.kubeconfig")
        users.write_kubeconfig(path, self.url, self.ca_file, user, self._tokens[user])
        return path

    def _start_controller_manager(self, bins):
        p = self.pki
        self._spawn("kube-controller-manager", [
            str(bins / "kube-controller-manager"),
            f"--kubeconfig={self._component_kubeconfig('system:kube-controller-manager')}",
            "--controllers=" + ",".join(CONTROLLERS),
            f"--service-account-private-key-file={p.sa_private_key}",
            f"--root-ca-file={p.ca_cert}",
            "--use-service-account-credentials=false",
            "--pvclaimbinder-sync-period=2s",  # default 15 s: seeded claims bind sooner
            "--leader-elect=false", "--port=0", "--secure-port=0", "--profiling=false",
        ])

    def _start_scheduler(self, bins):
        self._spawn("kube-scheduler", [
            str(bins / "kube-scheduler"),
            f"--kubeconfig={self._component_kubeconfig('system:kube-scheduler')}",
            "--leader-elect=false", "--port=0", "--secure-port=0", "--profiling=false",
        ])

    def _start_nodesim(self):
        os.makedirs(self.nodesim_state_dir, exist_ok=True)
        self._spawn("nodesim", [
            sys.executable, "-m", "tests.cluster.nodesim",
            "--apiserver", self.url, "--ca-file", self.ca_file,
            "--token-file", self.admin_token_file, "--state-dir", self.nodesim_state_dir,
            "--nodes", str(self.node_count), "--ready-file", self._nodesim_ready_file,
        ], env=_child_env())

    def _start_metrics(self):
        self._spawn("metrics", [
            sys.executable, "-m", "tests.cluster.metrics_standin",
            "--apiserver", self.url, "--ca-file", self.ca_file,
            "--token-file", self.admin_token_file, "--ready-file", self._metrics_ready_file,
        ], env=_child_env())

    def _create_editor_binding(self):
        ns = self.editor_namespace
        objects = [
            ("/api/v1/namespaces", {"metadata": {"name": ns}}),
            (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", {
                "metadata": {"name": "editor-edit"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
                            "kind": "ClusterRole", "name": "edit"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io",
                              "kind": "User", "name": "editor"}],
            }),
        ]
        for path, body in objects:
            status, resp = self.request("POST", path, body)
            if status not in (201, 409):
                raise ClusterStartError(f"POST {path} returned {status}: {resp}")

    # ---- readiness -------------------------------------------------------------

    def _status(self, path, method="GET", body=None, params=None):
        try:
            return self.request(method, path, body, params=params, timeout=5)[0]
        except urllib3.exceptions.HTTPError:
            return None

    def _apiserver_ready(self):
        return self._status("/readyz") == 200

    def _edit_role_aggregated(self):
        status, role = self.request(
            "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/edit", timeout=5)
        return status == 200 and bool(role.get("rules"))

    def _nodesim_ready(self):
        info = _read_json_file(self._nodesim_ready_file)
        if not info or not info.get("nodes"):
            return False
        self.nodes = [n["name"] for n in info["nodes"]]
        self.kubelet_ports = {n["name"]: n["kubeletPort"] for n in info["nodes"]}
        self.nodesim_log_dir = info.get("logDir")
        return True

    def _nodes_ready(self):
        status, body = self.request("GET", "/api/v1/nodes", timeout=5)
        if status != 200:
            return False
        ready = {n["metadata"]["name"] for n in body.get("items", []) if _node_ready(n)}
        return set(self.nodes) <= ready

    def _metrics_ready(self):
        info = _read_json_file(self._metrics_ready_file)
        if not info or not info.get("url"):
            return False
        self.metrics_url = info["url"]
        return True

    def _wait(self, what, predicate, component, interval=0.1):
        """Poll `predicate` until the start deadline; fail early if a component died."""
        while True:
            proc = self.exited_component()
            if proc:
                raise ClusterStartError(
                    f"{proc.name} exited with code {proc.exit_code()} while waiting for {what}; "
                    f"state kept in {self.state_dir}; last log lines:\n{proc.log_tail()}")
            try:
                if predicate():
                    return
            except urllib3.exceptions.HTTPError:
                pass  # apiserver not listening yet
            if time.monotonic() > self._deadline:
                tail = next((p.log_tail() for p in self._procs if p.name == component), "")
                raise ClusterStartError(
                    f"timed out waiting for {what}; state kept in {self.state_dir}; "
                    f"last lines of {component}'s log:\n{tail}")
            time.sleep(interval)

    # ---- public helpers ----------------------------------------------------------

    @property
    def admin_token(self):
        return self._tokens["admin"]

    @property
    def editor_token(self):
        return self._tokens["editor"]

    @property
    def norights_token(self):
        return self._tokens["nobody"]

    @property
    def expired_token(self):
        """User ``expired``: a JWT-shaped static token whose ``exp`` has passed (users.py)."""
        return self._tokens["expired"]

    def metrics_kubeconfig(self, path, token=None, channel=None):
        """Writes a kubeconfig naming the metrics stand-in as its API server, for a metrics
        client such as the metrics sidecar: ``token`` (default: the admin token) is the client's
        own identity (the stand-in forwards pod reads with it); ``channel`` selects one of the
        stand-in's switchable fault channels (see metrics_standin). Returns ``path``."""
        server = self.metrics_url + ("/faults/%s" % channel if channel else "")
        users.write_kubeconfig(path, server, self.ca_file, "metrics-sidecar",
                               token or self.admin_token)
        return path

    def exited_component(self):
        """The first component process that has exited (it should not have), or None."""
        return next((p for p in self._procs if p.exit_code() is not None), None)

    def request(self, method, path, body=None, token=None, params=None, raw=False, **kwargs):
        """Admin REST helper: (status, decoded JSON or bytes); token=None means admin."""
        return self._rest.request(method, path, body=body, token=token, params=params,
                                  raw=raw, **kwargs)

    def wait_for(self, predicate, timeout=30, interval=0.2, what="a condition"):
        """Poll until `predicate()` is truthy and return its value; TimeoutError otherwise."""
        return wait_for(predicate, timeout, interval, what)

    def new_namespace(self, prefix="t"):
        """A fresh namespace `<prefix>-<random>` that accepts pods; the caller deletes it."""
        name = f"{prefix}-{secrets.token_hex(4)}"
        status, body = self.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
        assert status == 201, f"creating namespace {name}: {status} {body}"
        self.wait_namespace_ready(name)
        return name

    def served_version(self, group, plural, candidates):
        """The first of `candidates` (newest first) in which `group` serves `plural`."""
        for version in candidates:
            status, body = self.request("GET", f"/apis/{group}/{version}")
            if status == 200 and any(r["name"] == plural for r in body.get("resources", [])):
                return version
        raise LookupError(f"no served version of {plural}.{group} among {candidates}")

    def wait_namespace_ready(self, namespace, timeout=30):
        """Wait until pods can be created in `namespace`.

        ServiceAccount admission refuses pods (500, "No API token found") until the
        apiserver's cache holds the `default` service account's token secret; a dry-run
        create is the exact test of that.
        """
        self.wait_for(
            lambda: self.request("POST", f"/api/v1/namespaces/{namespace}/pods", _DRY_RUN_POD,
                                 params={"dryRun": "All"}, timeout=5)[0] == 201,
            timeout=timeout, what=f"namespace {namespace} to accept pods")

    def service_account_token(self, namespace, name, timeout=30):
        """The token of a service account, once the token controller has made its secret."""
        base = f"/api/v1/namespaces/{namespace}"

        def token():
            status, sa = self.request("GET", f"{base}/serviceaccounts/{name}")
            if status != 200:
                return None
            for ref in sa.get("secrets") or []:
                status, secret = self.request("GET", f"{base}/secrets/{ref['name']}")
                if (status == 200 and secret.get("type") == "kubernetes.io/service-account-token"
                        and secret.get("data", {}).get("token")):
                    return base64.b64decode(secret["data"]["token"]).decode()
            return None

        return self.wait_for(token, timeout=timeout, what=f"token of {namespace}/{name}")

    def append_log(self, namespace, pod, container, lines, instance=None):
        from tests.cluster.nodesim.logs import append_log
        return append_log(self.nodesim_state_dir, namespace, pod, container, lines,
                          instance=instance)
