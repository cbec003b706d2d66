"""Issue #30's comparison of pod pages, whole cluster against pods only, read as a median of
alternated pairs. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_pairs [--pairs 5] [--pods 150000] [--json out.json]

One ``bench_scale`` run of each composition is one pair, and on a shared 2-core machine one
pair swings: the same start of the same build takes 31 to 37 s from one minute to the next, and
two runs of pods only can differ in p95 by a third. So this runs ``--pairs`` pairs, each a
gateway against the whole composition and one against pods only (the stand-in and the gateway
started afresh for each; which goes first alternates), and reports for each pod page (newest
first, by status, filtered) the ratio whole / pods only of each pair's 64-client p95 and
throughput, and their median and range over the pairs.

Each run: the stand-in (``bench_scale.StandIn``) with ``--rate`` pod changes a second (and, in
the whole composition, its 50 events a second in and out), a gateway, ready, then the pages of
``bench_scale``'s ``sequential`` and 16 clients (warming), then 64 clients per page for
``--clients-seconds``, spread over ``--client-processes`` processes (4 by default: one client
process's GIL would otherwise be in every latency). The gateway's CPU seconds per answered page
(user + system, /proc) are reported beside them.

``--same`` pairs pods only with pods only: what the machine alone makes of a ratio.
"""

import argparse
import json
import os
import statistics
import tempfile
import time

from tests.bench import bench_scale

HZ = os.sysconf("SC_CLK_TCK")
PAGES = tuple(bench_scale.SORTS)   # newest first ("creation"), by status, filtered


def cpu_seconds(pid):
    """User + system CPU seconds of process ``pid`` so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def one_run(composed, args):
    """{page: {p95_ms, rps, errors, cpu_ms_per_page}} of one gateway, plus its ready seconds."""
    standin = bench_scale.StandIn(args.pods, composed=composed)
    out = {"composition": "whole" if composed else "pods"}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-pairs-") as directory:
            standin.admin("churn", rate=args.rate)
            gw = bench_scale.start_gateway(standin, directory)
            try:
                out["ready_s"] = round(bench_scale.wait_ready(gw, args.budget), 1)
                quick = args.quick
                for sort in PAGES:
                    bench_scale.sequential(gw, sort, 5 if quick else 40, 0, 60)
                bench_scale.clients(gw, "creation", args.clients_seconds,
                                    count=4 if quick else 16,
                                    processes=args.client_processes)
                for sort in PAGES:
                    before = cpu_seconds(gw.proc.pid)
                    found = bench_scale.clients(gw, sort, args.clients_seconds,
                                                count=args.clients,
                                                processes=args.client_processes)
                    used = cpu_seconds(gw.proc.pid) - before
                    answered = found["requests"] - sum(found["errors"].values())
                    out[sort] = {"p95_ms": found["p95_ms"], "rps": found["rps"],
                                 "errors": found["errors"],
                                 "cpu_ms_per_page": round(1000 * used / answered, 3)
                                 if answered else None}
            finally:
                gw.stop()
    finally:
        standin.stop()
    bench_scale.log("%s: %s" % (out["composition"], json.dumps(out)))
    return out


def ratios(pairs, page, field):
    """Each pair's (first / second) of ``field`` on ``page``, where both have it."""
    found = []
    for first, second in pairs:
        a, b = first[page][field], second[page][field]
        if a is not None and b:
            found.append(a / b)
    return found


def summary(values):
    if not values:
        return None
    return {"median": round(statistics.median(values), 2), "min": round(min(values), 2),
            "max": round(max(values), 2), "n": len(values)}


def table(result):
    """Markdown: per page, the ratios' median (range) and the errors of every run."""
    first, second = result["compared"]
    lines = ["| page (%s / %s, %d pairs) | p95 ratio | throughput ratio | CPU per page ratio "
             "| errors |" % (first, second, len(result["pairs"])), "|---|---|---|---|---|"]

    def cell(found):
        return "-" if found is None else "%.2fx (%.2f-%.2f)" % (
            found["median"], found["min"], found["max"])
    for page in PAGES:
        got = result["ratios"][page]
        errors = sum(sum(run[page]["errors"].values()) for pair in result["pairs"]
                     for run in pair)
        lines.append("| %s | %s | %s | %s | %d |" % (page, cell(got["p95"]), cell(got["rps"]),
                                                     cell(got["cpu"]), errors))
    ready = summary(ratios_of_ready(result["pairs"]))
    if ready:
        lines.append("\nready, %s / %s: %.2fx (%.2f-%.2f)" % (first, second, ready["median"],
                                                              ready["min"], ready["max"]))
    return "\n".join(lines)


def ratios_of_ready(pairs):
    return [a["ready_s"] / b["ready_s"] for a, b in pairs if a.get("ready_s") and b.get("ready_s")]


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue #30: pod pages, whole cluster / pods "
                                                 "only, as a median of alternated pairs")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--rate", type=float, default=200.0, help="pod changes a second")
    parser.add_argument("--clients", type=int, default=bench_scale.CLIENTS)
    parser.add_argument("--clients-seconds", type=float, default=15.0)
    parser.add_argument("--client-processes", type=int, default=4)
    parser.add_argument("--same", action="store_true",
                        help="pods only against pods only (the machine's own spread)")
    parser.add_argument("--budget", type=float, default=300.0,
                        help="bound of the wait for ready, seconds")
    parser.add_argument("--quick", action="store_true", help="fewer warming requests (smoke)")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    first = not args.same   # composed or not, the first of each pair (its numerator)
    result = {"pods": args.pods, "rate": args.rate, "clients": args.clients,
              "client_processes": args.client_processes,
              "clients_seconds": args.clients_seconds,
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "compared": ["whole" if first else "pods", "pods"], "pairs": []}
    for k in range(args.pairs):
        if k % 2 == 0:   # alternate which runs first: a drift of the machine cancels out
            a = one_run(first, args)
            b = one_run(False, args)
        else:
            b = one_run(False, args)
            a = one_run(first, args)
        result["pairs"].append([a, b])
    pairs = result["pairs"]
    result["ratios"] = {page: {"p95": summary(ratios(pairs, page, "p95_ms")),
                               "rps": summary(ratios(pairs, page, "rps")),
                               "cpu": summary(ratios(pairs, page, "cpu_ms_per_page"))}
                        for page in PAGES}
    result["table"] = table(result)
    return bench_scale.report(result, args.json)


if __name__ == "__main__":
    main()
