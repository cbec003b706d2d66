"""Keeps the issue #30 pairs benchmark from rotting: one pair at 300 pods, quickly (figures
are not checked, only that both runs of the pair answered every page and were compared)."""

import json
import subprocess
import sys

from tests.bench.test_bench_scale_smoke import CLIENTS_SECONDS
from tests.support.gateway import ROOT


def test_bench_pairs_runs_one_pair_at_300_pods(tmp_path):
    out = tmp_path / "pairs.json"
    subprocess.run([sys.executable, "-m", "tests.bench.bench_pairs", "--pairs", "1",
                    "--pods", "300", "--quick", "--clients", "8", "--client-processes", "2",
                    "--clients-seconds", CLIENTS_SECONDS, "--budget", "30",
                    "--json", str(out)], cwd=ROOT, check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = json.loads(out.read_text())
    [[whole, pods]] = result["pairs"]
    assert (whole["composition"], pods["composition"]) == ("whole", "pods")
    for run in (whole, pods):
        assert run["ready_s"] > 0
        for page in ("creation", "status", "filtered"):
            assert run[page]["errors"] == {} and run[page]["rps"] > 0, (run, page)
            assert run[page]["cpu_ms_per_page"] is not None
    for page in ("creation", "status", "filtered"):
        # (the CPU ratio is left out: a quarter-second phase may use less than a clock tick)
        for field in ("p95", "rps"):
            assert result["ratios"][page][field]["n"] == 1, (page, field)
    assert "| status |" in result["table"] and "ready, whole / pods" in result["table"]
