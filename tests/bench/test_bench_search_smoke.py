"""Keeps the in-process search benchmark (tests/bench/bench_search.py) from rotting: 300 pods of
the stand-in's composition, three searches of each query (figures are not checked, only that
every query ran and found what the composition holds)."""

import json
import subprocess
import sys

from tests.support.gateway import ROOT


def test_bench_search_runs_at_300_pods(tmp_path):
    out = tmp_path / "search.json"
    subprocess.run([sys.executable, "-m", "tests.bench.bench_search", "--pods", "300",
                    "--searches", "3", "--churn", "5", "--json", str(out)], cwd=ROOT,
                   check=True, timeout=120, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = json.loads(out.read_text())
    assert result["objects"]["pods"] == 300 and result["objects"]["replicasets"] == 132
    # app-00012: its 20 pods, its replica sets, its config maps and service
    assert result["name"]["by_kind"]["pod"] == 20 and result["label"]["by_kind"]["pod"] == 20
    assert result["name"]["by_kind"]["replicaset"] >= 1
    assert result["status"]["by_kind"] == {"pod": result["status"]["matches"]} and \
        result["status"]["matches"] > 0
    assert 0 < result["combined"]["matches"] <= 200
    for name in ("name", "status", "combined", "label"):
        assert result[name]["p50_ms"] is not None
        assert set(result[name]["per_kind_p50_ms"]) == {
            "pod", "replicaset", "node", "event", "service", "endpointslice", "configmap"}
