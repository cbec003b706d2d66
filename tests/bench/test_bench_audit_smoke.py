"""Keeps the audited-write benchmark (issue #39) from rotting: a few writes through each
gateway against the session's cluster (figures are not checked, only that it ran)."""

import json
import subprocess
import sys

from tests.support.gateway import ROOT


def test_bench_audit_runs_a_few_writes(cluster):
    done = subprocess.run([sys.executable, "-m", "tests.bench.bench_audit", "--writes", "4",
                           "--kubeconfig", cluster.kubeconfig, "--token=" + cluster.admin_token,
                           "--json"], cwd=ROOT, timeout=180, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["writes"] == 4 and result["none"]["ratio_to_none"] == 1.0
    assert result["sqlite"]["p50_ms"] > 0 and "sqlite" in result["stored_after_ms"]
    assert result["sqlite"]["cpu_ms_per_write"] >= 0
