"""Keeps the issue #19 benchmark from rotting: the stand-in API server and the benchmark at
300 pods, quickly (figures are not checked, only that every phase ran and answered)."""

import json
import subprocess
import sys

from tests.support.gateway import ROOT

# Each clients phase lasts twice this: long enough for every client to page, short enough
# that the four phases cost seconds, not tens of them.
CLIENTS_SECONDS = "0.25"


def _pod_phases_ran(result):
    """Every phase of the pods ran and answered (figures are not checked)."""
    [rate] = result["rates"]
    assert rate["page_while_first_sync"]["status"] == 200
    first = rate["first_pages"]   # ready means ready: every first page asked, and answered
    assert first["errors"] == {} and len(first["pages"]) >= 8 and first["probes"] > 0
    assert result["kinds"]["pod"]["json_bytes_per_object"] > 5000   # heavy pods (issue #41)
    assert rate["page_creation"]["back_to_back"]["errors"] == {}
    assert rate["page_status"]["back_to_back"]["errors"] == {}
    assert rate["page_filtered"]["back_to_back"]["errors"] == {}
    assert rate["clients_creation"]["errors"] == {} and rate["clients_creation"]["requests"] > 0
    assert rate["deny"] == 403                          # the stand-in refused that token
    after = rate["after_410"]
    assert after["next_page_status"] == 200 and after["errors"] == {}
    assert after["pod_lists_completed"] >= 1            # the gateway re-listed
    assert result["standin"]["watches_with_bookmarks"] >= 1
    assert "| start to /readyz |" in result["table"]
    # the CPU beside the wall clock: the gateway's to ready, against the reference's
    assert rate["ready_cpu_s"]["gateway"] > 0 and result["reference_cpu_s"] > 0
    assert rate["ready_cpu_ratio"] > 0 and "| CPU to /readyz:" in result["table"]
    soaked = rate["soak"]    # the soak's phase ran: samples, its re-list, no error
    assert len(soaked["rss_mib"]) >= 2 and soaked["errors"] == {}
    # a fresh gateway against the cluster as the soak left it, beside the soaked one
    assert soaked["fresh"]["fresh_rss_mib"] > 0 and soaked["fresh"]["soaked_rss_mib"] > 0
    # where the memory is, at the start, before the re-list and at the end (SIGUSR1)
    assert len(soaked["heaps"]) == 3 and all(h and h["pymalloc_arenas"] > 0
                                             for _t, _rss, h in soaked["heaps"])
    # and how full the bounded tables are, in both gateways (a soak fills them more)
    assert all(soaked["fresh"][name]["label_maps"] > 0 and soaked["fresh"][name]["layouts"] > 0
               for name in ("fresh_heap", "soaked_heap"))


def test_bench_scale_sidecar_phase_at_300_pods(tmp_path):
    """The sidecar's phase: its scrapes read the watched pods (one LIST of pods in all); three
    scrapes a second apart rather than the benchmark's 15 s."""
    out = tmp_path / "sidecar.json"
    subprocess.run([sys.executable, "-m", "tests.bench.bench_scale", "--pods", "300",
                    "--rates", "", "--sidecar", "--sidecar-resolution", "1", "--budget", "30",
                    "--json", str(out)],
                   cwd=ROOT, check=True, timeout=120, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)
    side = json.loads(out.read_text())["sidecar"]
    assert len(side["scrape_s"]) == 3 and side["containers"] == 600
    assert side["pods_kept"] == [300] and side["pod_lists"] == 1
    assert side["watch_list_s"] is not None and "pod LISTs made 1" in \
        json.loads(out.read_text())["table"]


def test_bench_scale_composition_at_300_pods(tmp_path):
    """The whole cluster of issue #30 at 300 pods: every kind listed, synced and answering its
    pages, the pod phases (their clients in two processes here), the soak, and the cache's
    bytes per object of each kind; and the searches of issue #38 (--search). One run for all:
    the pods-only stand-in is run by the pairs' smoke test (test_bench_pairs_smoke.py), and a
    second run of this one cost the suite 15 s."""
    out = tmp_path / "composition.json"
    subprocess.run([sys.executable, "-m", "tests.bench.bench_scale", "--pods", "300",
                    "--rates", "200", "--quick", "--clients-seconds", CLIENTS_SECONDS,
                    "--budget", "30", "--composition", "--client-processes", "2",
                    "--search", "--soak-seconds", "2", "--json", str(out)], cwd=ROOT,
                   check=True, timeout=120,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    result = json.loads(out.read_text())
    _pod_phases_ran(result)
    kinds = result["kinds"]
    assert kinds["pod"]["objects"] == 300
    assert kinds["replicaset"]["objects"] == 132 and kinds["node"]["objects"] == 10
    assert kinds["service"]["objects"] == kinds["endpointslice"]["objects"] == 12
    assert kinds["event"]["objects"] >= 400 and kinds["configmap"]["objects"] == 24
    assert all(k["cache_bytes_per_object"] > 0 for k in kinds.values())
    [rate] = result["rates"]
    assert set(kinds) <= set(rate["kinds_ready_s"])      # each kind seen synced
    assert all(k["reference_cpu_s"] >= 0 for k in kinds.values()) and rate["ready_cpu_ratio"] > 0
    for kind in ("event", "replicaset", "node"):
        assert rate["page_" + kind]["errors"] == {} and rate["page_" + kind]["n"] == 5
    assert rate["page_pod_events"]["errors"] == {} and rate["page_pod_events"]["events"] >= 1
    assert rate["events_held"]["end"] > 0 and rate["events_held"]["applied_meanwhile"] > 0
    for phase in ("clients16_creation", "clients_creation", "clients_status",
                  "clients_filtered"):
        assert rate[phase]["errors"] == {} and rate[phase]["requests"] > 0, phase
    assert rate["after_410"]["next_page_status"] == 200
    assert "| event list page: first after ready / p50 |" in result["table"]
    assert "| replicaset | 132 |" in result["table"]
    for name in ("name", "status", "combined", "label"):
        search = rate["search_" + name]
        assert search["errors"] == {} and search["n"] == 5, (name, search)
    # the app-00012 of 300 pods: its pods and what else carries its label
    assert rate["search_label"]["matches"] >= 20 and rate["search_name"]["matches"] >= 20
    assert rate["search_status"]["matches"] > 0 and rate["search_combined"]["matches"] > 0
    assert all(k["errors"] == {} for k in rate["search_by_kind"].values())
    assert rate["search_beside_clients"]["errors"] == {}
    assert rate["search_beside_clients"]["n"] > 0
    for phase in ("search_clients_without", "search_clients_with"):
        assert rate[phase]["errors"] == {} and rate[phase]["requests"] > 0, phase
    assert "| search combined " in result["table"]
