"""Keeps the in-process node page benchmark (issue #30) from rotting: 600 pods on 20 nodes, a
few pages (figures are not checked, only that it ran and answered a page of nodes)."""

import json
import subprocess
import sys

from tests.support.gateway import ROOT


def test_bench_node_page_runs_at_600_pods(tmp_path):
    page = tmp_path / "page.json"
    done = subprocess.run([sys.executable, "-m", "tests.bench.bench_node_page", "--pods", "600",
                           "--pages", "5", "--json", str(page)], cwd=ROOT, check=True,
                          timeout=120, capture_output=True)
    result = json.loads(done.stdout)
    assert (result["pods"], result["nodes"]) == (600, 20)
    assert result["page_p50_ms"] > 0 and result["after_pod_changes_p50_ms"] > 0
    answer = json.loads(page.read_text())
    assert answer["listMeta"] == {"totalItems": 20} and len(answer["nodes"]) == 10
    assert all(n["allocatedResources"]["allocatedPods"] == 30 for n in answer["nodes"])
