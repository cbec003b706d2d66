"""`bin/dev-cluster`: run the local cluster for the demo until Ctrl-C or SIGTERM; with
``--clusters N``, N of them and one kubeconfig naming each (contexts local-1 ... local-N, for
`bin/dashboard --demo-clusters N`)."""
import argparse
import os
import signal
import sys
import time

from tests.cluster import users
from tests.cluster.controlplane import ClusterStartError, LocalCluster
from tests.cluster.workloads import seed


_interrupted = False


def _interrupt(signum, frame):
    # Once: Ctrl-C reaches us and bin/dashboard's trap sends SIGTERM a moment later; raised
    # again in the middle of cluster.stop(), it would cut the stop short with a traceback.
    # The stop is bounded (every wait in it has a timeout), so later signals are not needed.
    global _interrupted
    if _interrupted:
        return
    _interrupted = True
    raise KeyboardInterrupt


def context_name(index):
    """The kubeconfig context (and gateway path) of the index-th cluster (1-based)."""
    return f"local-{index}"


def _write_many_kubeconfig(clusters):
    """One kubeconfig with a context per cluster, the first one current; returns its path."""
    path = os.path.join(clusters[0].state_dir, "clusters.kubeconfig")
    users.write_contexts(path, {context_name(i): (c.url, c.ca_file, "admin", c.admin_token)
                                for i, c in enumerate(clusters, start=1)}, context_name(1))
    return path


def _write_env_file(path, clusters):
    """The first cluster's DASHBOARD_* values; with several, DASHBOARD_KUBECONFIG names them
    all and DASHBOARD_CLUSTER_COUNT, DASHBOARD_CLUSTER_NAME_i, DASHBOARD_APISERVER_i and
    DASHBOARD_ADMIN_TOKEN_i (1-based) say each one's context, address and token."""
    cluster = clusters[0]
    values = {
        "DASHBOARD_APISERVER": cluster.url,
        "DASHBOARD_CA_FILE": cluster.ca_file,
        "DASHBOARD_KUBECONFIG": cluster.kubeconfig,
        "DASHBOARD_ADMIN_TOKEN": cluster.admin_token,
        "DASHBOARD_METRICS_URL": cluster.metrics_url,
        "DASHBOARD_SIDECAR_KUBECONFIG": cluster.metrics_kubeconfig(
            os.path.join(cluster.state_dir, "metrics-sidecar.kubeconfig")),
    }
    if len(clusters) > 1:
        values["DASHBOARD_KUBECONFIG"] = _write_many_kubeconfig(clusters)
        values["DASHBOARD_CLUSTER_COUNT"] = len(clusters)
        for i, one in enumerate(clusters, start=1):
            values[f"DASHBOARD_CLUSTER_NAME_{i}"] = context_name(i)
            values[f"DASHBOARD_APISERVER_{i}"] = one.url
            values[f"DASHBOARD_ADMIN_TOKEN_{i}"] = one.admin_token
    tmp = f"{path}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.writelines(f"{k}={v}\n" for k, v in values.items())
    os.replace(tmp, path)  # readers never see half a file: its presence means "ready"


def _describe(cluster, ready_s, seed_s):
    lines = [
        f"control plane ready in {ready_s:.1f} s"
        + (f"; sample workloads seeded in {seed_s:.1f} s" if seed_s is not None else ""),
        f"  apiserver       {cluster.url}",
        f"  CA file         {cluster.ca_file}",
        f"  kubeconfig      {cluster.kubeconfig}",
        f"  metrics         {cluster.metrics_url}",
        f"  nodes           {', '.join(cluster.nodes)}",
        f"  state and logs  {cluster.state_dir}",
        # Throw-away tokens of a local cluster, printed on purpose so a person can use them.
        f"  admin token     {cluster.admin_token}",
        f"  editor token    {cluster.editor_token}"
        f"   (edit in namespace {cluster.editor_namespace})",
        f"  nobody token    {cluster.norights_token}   (no rights)",
        f"  try: kubectl --kubeconfig {cluster.kubeconfig} get pods -A",
    ]
    print("\n".join(lines), flush=True)


def _watch(clusters):
    """Block until interrupted; returns an exit status if a component dies first."""
    while True:
        time.sleep(1)
        for cluster in clusters:
            proc = cluster.exited_component()
            if proc:
                print(f"{proc.name} exited with code {proc.exit_code()}; last log lines:\n"
                      f"{proc.log_tail()}", file=sys.stderr, flush=True)
                return 1


def _mark(cluster, name):
    """A namespace named after the cluster's context, so that each cluster shows whose it is."""
    cluster.request("POST", "/api/v1/namespaces",
                    body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def main(argv=None):
    parser = argparse.ArgumentParser(prog="dev-cluster", description=__doc__)
    parser.add_argument("--no-seed", action="store_true", help="do not create sample workloads")
    parser.add_argument("--nodes", type=int, default=2, help="simulated nodes (default 2)")
    parser.add_argument("--env-file", help="write DASHBOARD_* KEY=VALUE lines here once ready")
    parser.add_argument("--clusters", type=int, default=1,
                        help="local clusters to start, one after the other (default 1)")
    args = parser.parse_args(argv)
    if not 1 <= args.clusters <= 10:
        parser.error("--clusters: from 1 to 10")

    # SIGINT too: a launcher that starts us in the background may have it ignored.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    clusters = []
    status = 0
    try:
        for i in range(1, args.clusters + 1):
            print("starting the local cluster" + (
                f" {context_name(i)} ({i} of {args.clusters})" if args.clusters > 1 else "")
                + "...", flush=True)
            try:
                cluster = LocalCluster.start(nodes=args.nodes)
            except ClusterStartError as e:
                print(f"dev-cluster: {e}", file=sys.stderr)
                return 1
            clusters.append(cluster)
            seed_s = None
            if not args.no_seed:
                t0 = time.monotonic()
                seed(cluster)
                seed_s = time.monotonic() - t0
            if args.clusters > 1:
                _mark(cluster, context_name(i))
            _describe(cluster, cluster.start_seconds, seed_s)
        if args.env_file:
            _write_env_file(args.env_file, clusters)
        print("Ctrl-C stops everything.", flush=True)
        status = _watch(clusters)
    except KeyboardInterrupt:
        print("\nstopping...", flush=True)
    finally:
        for cluster in reversed(clusters):
            cluster.stop()
        if args.env_file and os.path.exists(args.env_file):
            os.remove(args.env_file)  # stale once the cluster is gone
    return status


if __name__ == "__main__":
    sys.exit(main())
