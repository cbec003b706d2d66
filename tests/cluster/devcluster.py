"""`bin/dev-cluster`: run the local cluster for the demo until Ctrl-C or SIGTERM."""
import argparse
import os
import signal
import sys
import time

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


def _write_env_file(path, cluster):
    values = {
        "DASHBOARD_APISERVER": cluster.url,
        "DASHBOARD_CA_FILE": cluster.ca_file,
        "DASHBOARD_KUBECONFIG": cluster.kubeconfig,
        "DASHBOARD_ADMIN_TOKEN": cluster.admin_token,
        "DASHBOARD_METRICS_URL": cluster.metrics_url,
        "DASHBOARD_SIDECAR_KUBECONFIG": cluster.metrics_kubeconfig(
            os.path.join(cluster.state_dir, "metrics-sidecar.kubeconfig")),
    }
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
        "Ctrl-C stops everything.",
    ]
    print("\n".join(lines), flush=True)


def _watch(cluster):
    """Block until interrupted; returns an exit status if a component dies first."""
    while True:
        time.sleep(1)
        proc = cluster.exited_component()
        if proc:
            print(f"{proc.name} exited with code {proc.exit_code()}; last log lines:\n"
                  f"{proc.log_tail()}", file=sys.stderr, flush=True)
            return 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="dev-cluster", description=__doc__)
    parser.add_argument("--no-seed", action="store_true", help="do not create sample workloads")
    parser.add_argument("--nodes", type=int, default=2, help="simulated nodes (default 2)")
    parser.add_argument("--env-file", help="write DASHBOARD_* KEY=VALUE lines here once ready")
    args = parser.parse_args(argv)

    # SIGINT too: a launcher that starts us in the background may have it ignored.
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    cluster = None
    status = 0
    try:
        print("starting the local cluster...", flush=True)
        try:
            cluster = LocalCluster.start(nodes=args.nodes)
        except ClusterStartError as e:
            print(f"dev-cluster: {e}", file=sys.stderr)
            return 1
        seed_s = None
        if not args.no_seed:
            t0 = time.monotonic()
            seed(cluster)
            seed_s = time.monotonic() - t0
        if args.env_file:
            _write_env_file(args.env_file, cluster)
        _describe(cluster, cluster.start_seconds, seed_s)
        status = _watch(cluster)
    except KeyboardInterrupt:
        print("\nstopping...", flush=True)
    finally:
        if cluster:
            cluster.stop()
        if args.env_file and os.path.exists(args.env_file):
            os.remove(args.env_file)  # stale once the cluster is gone
    return status


if __name__ == "__main__":
    sys.exit(main())
