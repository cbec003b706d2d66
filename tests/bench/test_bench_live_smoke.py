"""Keeps the issue #40 benchmark from rotting: bench_live at 300 pods, 10 browsers refreshing
every second for 2 s (without validators, with them, and on today's gateway), 10 subscribers
and 1 timed notice, a 2 s soak (figures are not checked, only that every phase ran and
answered as it should)."""

import json

# Started with the package's first test (conftest.py): it mostly waits, so it runs beside the
# others; (argv, seconds its test waits for it at most).
EARLY_RUN = (["tests.bench.bench_live", "--pods", "300", "--browsers", "10", "--interval", "1",
              "--seconds", "2", "--subscribers", "10", "--probes", "1", "--soak-seconds", "2",
              "--page-requests", "5", "--background-seconds", "1", "--churn", "20",
              "--event-rate", "5", "--client-processes", "1", "--budget", "60"], 180)


def test_bench_live_runs_at_300_pods(early_runs):
    result = json.loads(early_runs["test_bench_live_smoke.py"].finish())
    for cost in result["page_cost"].values():
        assert cost["tag"] and cost["full_status"] == {"200": 5}
        assert cost["refresh_status"] == {"304": 5}            # the page did not change
    today, conditional = result["browsers_today"], result["browsers_conditional"]
    # today's on a second gateway, its access answers lasting the TTL only
    assert result["today_flags"] == ["--access-cache-max-age=0"]
    for run in (today, result["browsers_unconditional"]):
        assert set(run["by_code"]) == {"200"} and run["requests"] >= 10
    for run in (today, result["browsers_unconditional"], conditional):
        assert run["connections_opened"] <= 10 < run["requests"]   # each browser keeps one
    assert set(conditional["by_code"]) <= {"200", "304"} and conditional["requests"] >= 10
    subs = result["subscribers"]
    assert subs["refused"] == 0 and subs["closed_early_count"] == 0
    assert subs["notice_latency"]["n"] > 0 and subs["notice_latency"]["missed"] == 0
    assert "| conditional / today |" in result["table"]
