"""Keeps the lists benchmark (issue #11) from rotting: a real local cluster at 700 pods (the
first size with a canary deployment, so the filtered page lists pods), every case run a few
times through the cache and through pass-through lists, 16 users included (figures are not
checked, only that every answer was the right page and that the cached answers were those of
the pass-through gateway)."""

import json

# Started with the package's first test (conftest.py), beside the others: its own cluster
# seeded and asked, ~15 s alone, where the suite's tests leave a core mostly idle; (argv,
# seconds its test waits for it at most).
EARLY_RUN = (["tests.bench.bench_lists", "--pods", "700", "--users-at", "700", "--quick"], 400)


def test_bench_lists_runs_at_700_pods(early_runs):
    [result] = json.loads(early_runs["test_bench_lists_smoke.py"].finish())["results"]
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
