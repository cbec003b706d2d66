"""Keeps the lists benchmark (issue #11) from rotting: a real local cluster at 700 pods (the
first size with a canary deployment, so the filtered page lists pods), every case run a few
times through the cache and through pass-through lists, 16 users included (figures are not
checked, only that every answer was the right page and that the cached answers were those of
the pass-through gateway)."""

import json
import subprocess
import sys

from tests.support.gateway import ROOT


def test_bench_lists_runs_at_700_pods(tmp_path):
    out = tmp_path / "lists.json"
    subprocess.run([sys.executable, "-m", "tests.bench.bench_lists", "--pods", "700",
                    "--users-at", "700", "--quick", "--json", str(out)],
                   cwd=ROOT, check=True, timeout=400, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
    [result] = json.loads(out.read_text())["results"]
    assert result["objects_at_end"]["pods"] == 700
    for mode in ("cache", "pass"):
        cases = result[mode]
        assert "16 users: pods by creation" in cases and "2 users x3: pods by creation" in cases
        for name, measured in cases.items():
            outcomes = dict(measured["conc"]["outcomes"])
            if "seq" in measured:
                for outcome, count in measured["seq"]["outcomes"].items():
                    outcomes[outcome] = outcomes.get(outcome, 0) + count
            assert set(outcomes) == {"ok"}, (mode, name, outcomes)
    assert result["answers_compared"] == 9
    assert all(status == 200 and items > 0     # pages, not errors or empty pages alike
               for status, items in result["answers_items"].values()), result["answers_items"]
    assert result["answers_differing"] == {}
