"""Keeps the many-clusters benchmark from rotting: three clusters (contexts) of one stand-in
at 300 pods, quickly (figures are not checked, only that every cluster started and answered)."""

import json
import subprocess
import sys

from tests.support.gateway import ROOT


def test_bench_clusters_runs_three_clusters(tmp_path):
    out = tmp_path / "clusters.json"
    subprocess.run([sys.executable, "-m", "tests.bench.bench_clusters", "--pods", "300",
                    "--clusters", "3", "--budget", "30", "--json", str(out)],
                   cwd=ROOT, check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = json.loads(out.read_text())
    assert result["page_statuses"] == [200]       # every cluster's pages, from its own cache
    assert result["clusters"] == 3 and "mib_per_added_cluster" in result
