"""Benchmark of issue #40: browsers refreshing unchanged pages, and browsers told of changes,
against the whole composition of the stand-in API server (tests/bench/standin.py
``--composition``: 150,000 pods and the rest of the cluster, with its churn). Not part of the
test suite.

    .venv/bin/python -m tests.bench.bench_live [--pods 150000] [--churn 200] [--event-rate 50]
        [--browsers 1000] [--interval 5] [--seconds 60] [--subscribers 1000]
        [--soak-seconds 600] [--today-tree CHECKOUT] [--new-connections] [--json out.json]

One stand-in (its composition scaled by ``--pods`` / 150,000) and one gateway (metrics off),
then, for the gateway process alone (CPU from /proc, user + system):

1. **page cost**, the cluster quiet (no pod churn, no events): for a few pages, the gateway's
   CPU per request of ``--page-requests`` full pages (no validator held) and as many refreshes
   of the same unchanged page (``If-None-Match`` with its tag: 304s), from one client, one after
   the other; the ratio (target: a refresh of an unchanged page at most a fifth of a full
   page's CPU); and the same full page for a caller whose access answer is not kept (a new
   token each time: the access review a refresh every 5 s pays, ``--access-cache-ttl`` being
   5 s as well);
2. **browsers**, with the churn (``--churn`` pod changes a second and ``--event-rate`` events
   in and out a second): ``--browsers`` browsers, each with its own token and one page of a
   realistic mix (kinds, one namespace or all, sorts, pages: ``MIX``), refreshing every
   ``--interval`` seconds (staggered), each on the connection it keeps open as a browser does
   (``--new-connections``: a new one for every request); first a warm-up of up to 30 s (not
   measured: the browsers' sorts built, whose upkeep is then part of the churn's cost, first
   access reviews asked), then the churn alone for ``--background-seconds`` (the gateway's
   CPU for the churn itself, taken out of each run's CPU per request), then two runs of
   ``--seconds``, the same browsers and pages: "no validator" (every refresh a full page, as
   while lists were ``no-store``) and "conditional" (each browser keeps the tag of its last
   200 and sends it, as a browser does with ``private, no-cache``); then once more, "today",
   on a second gateway, warmed and measured the same way, without validators: started with
   ``--today-flag`` (default ``--access-cache-max-age=0``: access answers last
   ``--access-cache-ttl`` only, as before they were kept while the watched RBAC is
   unchanged), or from ``--today-tree``, another checkout (the commit before issue #40's
   work: the gateway as the issue found it); per run the gateway's CPU (cores), the answers by
   code, latency p50/p95, the connections opened, and the ratio of conditional to today
   (target: at most half);
3. **subscribers**: ``--subscribers`` WebSocket connections (/api/v1/live), each with its own
   token and one subscription from the mix (nodes, which cannot be watched, left out): the RSS
   they add (per subscriber); then, the cluster quiet, a probe every PROBE_EVERY seconds
   changes one pod of one namespace (the stand-in's ``touch``) and the time from that change
   until each subscriber of a pod list of that namespace (or of all namespaces) hears
   "changed" is taken (an upper bound of "after the change reaches the cache": it includes the
   watch's delivery; target p95 under 2 s); then, with the churn, ``--soak-seconds`` with every
   subscriber connected: RSS every SOAK_SAMPLE seconds (no growth), notices a second, the
   connections still open at the end.

Clients are asyncio (Tornado's HTTP and WebSocket clients) in ``--client-processes`` spawned
processes, so the benchmark's own CPU is not the gateway's. Everything started is stopped at
the end (and on errors); each phase is bounded in time.
"""

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import tempfile
import time
import urllib.parse

import urllib3

from tests.bench import bench_scale
from tests.bench.bench_pairs import cpu_seconds
from tests.bench.bench_scale import log, memory, ms, pct

NAMESPACES = 50
PER_PAGE = 10
# The pages browsers show: (weight, kind, namespaced, [(weight, sortBy)]), one namespace of 50
# (ONE_NAMESPACE of the time) or all, the first page mostly (FIRST_PAGE), else the 2nd or 3rd.
MIX = [
    (40, "pod", True, [(70, "d,creationTimestamp"), (20, "a,name"), (10, "a,status")]),
    (10, "replicaset", True, [(80, "d,creationTimestamp"), (20, "a,name")]),
    (10, "event", True, [(100, "d,creationTimestamp")]),
    (10, "service", True, [(70, "d,creationTimestamp"), (30, "a,name")]),
    (8, "configmap", True, [(70, "d,creationTimestamp"), (30, "a,name")]),
    (7, "endpointslice", True, [(100, "d,creationTimestamp")]),
    (10, "namespace", False, [(100, "a,name")]),
    (5, "node", False, [(70, "a,name"), (30, "d,creationTimestamp")]),
]
ONE_NAMESPACE = 0.7
FIRST_PAGE = 0.85
# The pages whose cost is measured alone, the cluster quiet.
COST_PAGES = [
    ("pods, all namespaces, newest first", "/api/v1/pod", {"sortBy": "d,creationTimestamp"}),
    ("pods of one namespace, by name", "/api/v1/pod/ns-07", {"sortBy": "a,name"}),
    ("replica sets of one namespace", "/api/v1/replicaset/ns-07",
     {"sortBy": "d,creationTimestamp"}),
    ("services, all namespaces", "/api/v1/service", {"sortBy": "a,name"}),
]
PROBE_EVERY = 2.0
SOAK_SAMPLE = 10.0


def pages_for(count, seed=40, watchable=False):
    """``count`` pages of the mix: [(kind, path with query)]; ``watchable``: no nodes."""
    rng = random.Random(seed)
    mix = [m for m in MIX if not (watchable and m[1] == "node")]
    out = []
    for _ in range(count):
        _, kind, namespaced, sorts = rng.choices(mix, weights=[m[0] for m in mix])[0]
        path = "api/v1/" + kind
        if namespaced and rng.random() < ONE_NAMESPACE:
            path += "/ns-%02d" % rng.randrange(NAMESPACES)
        sort = rng.choices([s for _, s in sorts], weights=[w for w, _ in sorts])[0]
        page = 1 if rng.random() < FIRST_PAGE else rng.choice((2, 3))
        path += "?" + urllib.parse.urlencode({"itemsPerPage": PER_PAGE, "page": page,
                                              "sortBy": sort})
        out.append((kind, path))
    return out


def cores(pid, seconds, since):
    """The gateway's CPU over ``seconds`` as cores, from ``since`` (cpu_seconds then)."""
    return round((cpu_seconds(pid) - since) / seconds, 3)


# --- 1. page cost ------------------------------------------------------------------------------

def page_cost(gw, requests):
    """{page: {full_cpu_ms, refresh_cpu_ms, ratio, refresh_status}} from one client."""
    http = urllib3.PoolManager(retries=False, maxsize=1,
                               timeout=urllib3.Timeout(connect=5, read=60))
    headers = {"Authorization": "Bearer cost-client"}
    out = {}
    for name, path, params in COST_PAGES:
        url = gw.url + path + "?" + urllib.parse.urlencode(dict(params, itemsPerPage=PER_PAGE))
        first = http.request("GET", url, headers=headers)
        tag = first.headers.get("ETag")
        for _ in range(10):   # warm: the page's index built, the memo filled
            http.request("GET", url, headers=headers)
        found = {}
        for mode, sent in (("full", headers), ("refresh", dict(headers, **{
                "If-None-Match": tag or '"none"'}))):
            statuses = {}
            before = cpu_seconds(gw.proc.pid)
            for _ in range(requests):
                status = http.request("GET", url, headers=sent).status
                statuses[status] = statuses.get(status, 0) + 1
            found[mode] = (1000 * (cpu_seconds(gw.proc.pid) - before) / requests, statuses)
        # The same full page for a caller not seen within --access-cache-ttl (a new token
        # each time): what its access review adds (a browser refreshing every 5 s pays one
        # on most refreshes, the TTL being 5 s as well).
        before = cpu_seconds(gw.proc.pid)
        for n in range(requests):
            http.request("GET", url, headers={"Authorization": "Bearer cost-new-%s-%d"
                                              % (len(out), n)})
        reviewed = 1000 * (cpu_seconds(gw.proc.pid) - before) / requests
        out[name] = {"full_cpu_ms": round(found["full"][0], 3),
                     "full_new_caller_cpu_ms": round(reviewed, 3),
                     "refresh_cpu_ms": round(found["refresh"][0], 3),
                     "ratio": round(found["refresh"][0] / found["full"][0], 3)
                     if found["full"][0] else None,
                     "full_status": found["full"][1], "refresh_status": found["refresh"][1],
                     "tag": bool(tag)}
        log("page cost, %s: %s" % (name, out[name]))
    return out


# --- 2. browsers -------------------------------------------------------------------------------

class KeptConnection:
    """A browser's HTTP/1.1 connection to the gateway, kept open between its requests as a
    browser keeps it (Chromium keeps an idle connection that was used for minutes), opened
    again when the gateway has closed it. ``get`` answers (status, headers by lower-case
    name); the body is read and dropped (gzip asked for, as a browser does)."""

    def __init__(self, host, port, timeout):
        self.host, self.port, self.timeout = host, port, timeout
        self.reader = self.writer = None
        self.opened = 0

    async def get(self, path, headers):
        for attempt in (0, 1):
            fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.wait_for(
                    asyncio.open_connection(self.host, self.port), self.timeout)
                self.opened += 1
            try:
                return await asyncio.wait_for(self._exchange(path, headers), self.timeout)
            except (ConnectionError, asyncio.IncompleteReadError, EmptyReply):
                self.close()
                if fresh or attempt:   # a kept connection the gateway closed: once more
                    raise
            except BaseException:      # a timeout: what is left on it is no answer's start
                self.close()
                raise

    async def _exchange(self, path, headers):
        lines = ["GET %s HTTP/1.1" % path, "Host: %s:%d" % (self.host, self.port),
                 "Accept: application/json", "Accept-Encoding: gzip, deflate"]
        lines += ["%s: %s" % item for item in headers.items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise EmptyReply()
        code = int(status_line.split()[1])
        found = {}
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            found[name.strip().lower()] = value.strip()
        if code in (204, 304) or code < 200:
            pass
        elif "content-length" in found:
            await self.reader.readexactly(int(found["content-length"]))
        elif found.get("transfer-encoding", "").lower() == "chunked":
            while True:
                size = int((await self.reader.readline()).split(b";")[0], 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:                      # to the end of the connection
            await self.reader.read()
            found["connection"] = "close"
        if found.get("connection", "").lower() == "close":
            self.close()
        return code, found

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


class EmptyReply(Exception):
    """The connection ended before a status line: the gateway closed it."""


def _browsers_process(url, browsers, total, interval, seconds, conditional, ready, go, start,
                      results, kept=True):
    """One process's ``browsers`` [(index, kind, path)] of ``total``: [(seconds, code, kind)]
    put on ``results``, and the connections they opened. ``kept``: each browser keeps its
    connection (KeptConnection), else a new one for each request (Tornado's client)."""
    import tornado.httpclient   # here: the spawned process imports what it runs

    parsed = urllib.parse.urlsplit(url)

    async def run():
        client = tornado.httpclient.AsyncHTTPClient(max_clients=512)
        found = []
        connections = []

        async def browser(index, kind, path):
            token = "browser-%04d" % index
            tag = None
            connection = KeptConnection(parsed.hostname, parsed.port, 120) if kept else None
            if connection is not None:
                connections.append(connection)
            at = start.value + interval * index / total   # the browsers' refreshes staggered
            end = start.value + seconds
            while at < end:
                await asyncio.sleep(max(0.0, at - time.monotonic()))
                headers = {"Authorization": "Bearer " + token}
                if conditional and tag:
                    headers["If-None-Match"] = tag
                t0 = time.monotonic()
                try:
                    if connection is not None:
                        code, answered = await connection.get("/" + path, headers)
                        answered_tag = answered.get("etag")
                    else:
                        reply = await client.fetch(url + "/" + path, headers=headers,
                                                   raise_error=False, request_timeout=120)
                        code, answered_tag = reply.code, reply.headers.get("Etag")
                    if code == 200:
                        tag = answered_tag
                except Exception as exc:  # noqa: BLE001 (counted, the browser goes on)
                    code = type(exc).__name__
                found.append((time.monotonic() - t0, code, kind))
                at += interval
            if connection is not None:
                connection.close()
        await asyncio.gather(*(browser(index, kind, path) for index, kind, path in browsers))
        return found, sum(c.opened for c in connections)

    ready.put(len(browsers))
    go.wait(120)
    results.put(asyncio.new_event_loop().run_until_complete(run()))


def spread(pages, processes):
    """The pages dealt to ``processes`` processes: [[(index, kind, path)]], none empty."""
    shares = [[(i, kind, path) for i, (kind, path) in enumerate(pages) if i % processes == p]
              for p in range(processes)]
    return [share for share in shares if share]


def browsers(gw, standin, pages, interval, seconds, conditional, processes, kept=True):
    """The browsers' phase: {cores, rps, by_code, p50/p95 of 200s and 304s, share of 304s,
    and of each kind, access reviews the stand-in answered meanwhile, connections opened}."""
    context = multiprocessing.get_context("spawn")
    ready, results, go = context.Queue(), context.Queue(), context.Event()
    start = context.Value("d", 0.0)
    children = [context.Process(target=_browsers_process, daemon=True, args=(
        gw.url, share, len(pages), interval, seconds, conditional, ready, go, start, results,
        kept)) for share in spread(pages, processes)]
    flat = []
    opened = 0
    try:
        for child in children:
            child.start()
        for _ in children:
            ready.get(timeout=120)
        start.value = time.monotonic() + 0.5
        go.set()
        time.sleep(max(0.0, start.value - time.monotonic()))
        before = cpu_seconds(gw.proc.pid)
        reviews = standin.stats()["access_reviews"]
        time.sleep(seconds)
        used = cores(gw.proc.pid, seconds, before)
        reviews = standin.stats()["access_reviews"] - reviews
        for _ in children:
            found, connections = results.get(timeout=seconds + 300)
            flat += found
            opened += connections
    finally:
        for child in children:
            child.join(10)
            if child.is_alive():
                child.kill()
    by_code, by_kind = {}, {}
    for _, code, kind in flat:
        by_code[str(code)] = by_code.get(str(code), 0) + 1
        counts = by_kind.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += code == 304
    ok = [s for s, code, _ in flat if code == 200]
    same = [s for s, code, _ in flat if code == 304]
    return {"cores": used, "requests": len(flat), "rps": round(len(flat) / seconds, 1),
            "by_code": by_code, "access_reviews_per_s": round(reviews / seconds, 1),
            "share_304_by_kind": {kind: round(n304 / n, 2) for kind, (n, n304)
                                  in sorted(by_kind.items())},
            "p50_200_ms": ms(pct(ok, 0.5)), "p95_200_ms": ms(pct(ok, 0.95)),
            "p50_304_ms": ms(pct(same, 0.5)), "p95_304_ms": ms(pct(same, 0.95)),
            "share_304": round(len(same) / len(flat), 3) if flat else None,
            "connections_opened": opened if kept else len(flat)}


def background(gw, seconds):
    """The churn alone, no client: the gateway's cores and RSS (first, last) meanwhile."""
    first = memory(gw.proc.pid)[0]
    before = cpu_seconds(gw.proc.pid)
    time.sleep(seconds)
    return {"cores": cores(gw.proc.pid, seconds, before),
            "rss_mib": [round(first or 0, 1), round(memory(gw.proc.pid)[0] or 0, 1)]}


def net_ms(run, idle):
    """CPU per request of a browsers' run, the churn's own CPU taken out (ms)."""
    return round(1000 * (run["cores"] - idle["cores"]) / run["rps"], 3) if run["rps"] else None


# --- 3. subscribers ----------------------------------------------------------------------------

def _subscribers_process(url, subs, ready, go, stop, results):
    """One process's subscribers [(index, path)]: each connects, signs in, subscribes to its
    page and records when it hears "changed"; {index: [monotonic times]}, refusals and closes
    on ``results`` once ``stop`` is set."""
    import tornado.websocket   # here: the spawned process imports what it runs

    async def run():
        heard, refused, closed, conns = {}, {}, {}, []
        answered = asyncio.Semaphore(0)   # one release per subscription answered (or failed)

        async def subscriber(index, path):
            try:
                conn = await tornado.websocket.websocket_connect(
                    url.replace("http", "ws", 1) + "/api/v1/live", connect_timeout=60)
            except Exception as exc:  # noqa: BLE001 (counted)
                closed[index] = "connect: %s" % type(exc).__name__
                answered.release()
                return
            conns.append(conn)
            await conn.write_message(json.dumps({"type": "auth",
                                                 "token": "subscriber-%04d" % index}))
            await conn.write_message(json.dumps({"type": "subscribe", "id": "page",
                                                 "path": path}))
            times = heard[index] = []
            while True:
                text = await conn.read_message()
                if text is None:
                    if not stop.is_set():   # closed by the gateway, not by the end
                        closed[index] = [conn.close_code, conn.close_reason]
                        answered.release()
                    return
                message = json.loads(text)
                if message["type"] == "changed":
                    times.append(time.monotonic())
                elif message["type"] in ("subscribed", "refused"):
                    answered.release()
                    if message["type"] == "refused":
                        refused[index] = [message["code"], message["message"][:80]]

        tasks = [asyncio.ensure_future(subscriber(index, path)) for index, _, path in subs]
        try:
            await asyncio.wait_for(asyncio.gather(*(answered.acquire() for _ in subs)), 120)
        except asyncio.TimeoutError:
            pass   # those not answered are counted by the parent (no notices)
        ready.put(len(subs))
        while not stop.is_set():
            await asyncio.sleep(0.2)
        for conn in conns:
            conn.close()
        await asyncio.sleep(0.5)
        for task in tasks:
            task.cancel()
        return {"heard": heard, "refused": refused, "closed": closed}

    go.wait(120)
    results.put(asyncio.new_event_loop().run_until_complete(run()))


def subscribers(gw, standin, pages, processes, soak_seconds, churn, event_rate, probes):
    """The subscribers' phase (see the module docstring)."""
    out = {"subscribers": len(pages)}
    context = multiprocessing.get_context("spawn")
    ready, results, go, stop = (context.Queue(), context.Queue(), context.Event(),
                                context.Event())
    children = [context.Process(target=_subscribers_process, daemon=True, args=(
        gw.url, share, ready, go, stop, results)) for share in spread(pages, processes)]
    rss_before = memory(gw.proc.pid)[0]
    found = {"heard": {}, "refused": {}, "closed": {}}
    try:
        for child in children:
            child.start()
        go.set()
        for _ in children:
            ready.get(timeout=180)   # every one of its subscribers connected and answered
        time.sleep(1.0)
        rss_after = memory(gw.proc.pid)[0]
        out["rss_before_mib"] = round(rss_before or 0, 1)
        out["rss_subscribed_mib"] = round(rss_after or 0, 1)
        out["kib_per_subscriber"] = round(1024 * ((rss_after or 0) - (rss_before or 0))
                                          / max(1, len(pages)), 1)
        log("subscribers: RSS %s -> %s MiB" % (out["rss_before_mib"],
                                               out["rss_subscribed_mib"]))
        # Latency: the cluster quiet, one pod of one namespace changed every PROBE_EVERY s.
        standin.admin("churn", rate=0)
        standin.admin("events", rate=0)
        time.sleep(PROBE_EVERY)
        probed = []
        for n in range(probes):
            k = (n * 7) % NAMESPACES
            standin.admin("touch", namespace=k)
            probed.append((k, time.monotonic()))
            time.sleep(PROBE_EVERY)
        # The soak: the churn on, RSS sampled.
        standin.admin("churn", rate=churn)
        standin.admin("events", rate=event_rate)
        samples = []
        soak_start = time.monotonic()
        cpu_before = cpu_seconds(gw.proc.pid)
        while time.monotonic() - soak_start < soak_seconds:
            time.sleep(min(SOAK_SAMPLE, max(0.0, soak_seconds - (time.monotonic()
                                                                  - soak_start))))
            samples.append(round(memory(gw.proc.pid)[0] or 0, 1))
        out["soak_cores"] = cores(gw.proc.pid, soak_seconds, cpu_before)
        out["soak_rss_mib"] = samples
        stop.set()
        for _ in children:
            part = results.get(timeout=120)
            for key in found:
                found[key].update(part[key])
    finally:
        stop.set()
        for child in children:
            child.join(15)
            if child.is_alive():
                child.kill()
    # The probes' latencies: per probe, each subscriber of a pod list of its namespace or of
    # all namespaces, the first notice after the change (within PROBE_EVERY).
    latencies = []
    missed = 0
    numbered = {int(i): times for i, times in found["heard"].items()}
    for k, t0 in probed:
        for index, (kind, path) in enumerate(pages):
            if kind != "pod":
                continue
            namespace = path.split("?")[0].split("/")[3:4]
            if namespace and namespace[0] != "ns-%02d" % k:
                continue
            times = numbered.get(index) or []
            after = [t - t0 for t in times if t0 <= t < t0 + PROBE_EVERY]
            if after:
                latencies.append(min(after))
            else:
                missed += 1
    out["probes"] = len(probed)
    out["notice_latency"] = {"n": len(latencies), "missed": missed,
                             "p50_ms": ms(pct(latencies, 0.5)),
                             "p95_ms": ms(pct(latencies, 0.95)),
                             "max_ms": ms(max(latencies) if latencies else None)}
    notices = sum(len(t) for t in found["heard"].values())
    out["notices_total"] = notices
    out["refused"] = len(found["refused"])
    out["closed_early"] = {str(i): c for i, c in list(found["closed"].items())[:5]}
    out["closed_early_count"] = len(found["closed"])
    if samples:
        out["soak_rss_growth_mib"] = round(samples[-1] - samples[0], 1)
    log("subscribers: %s" % json.dumps(out))
    return out


# --- the run -----------------------------------------------------------------------------------

def table(result):
    lines = ["| page (quiet cluster) | full page CPU | unchanged refresh CPU (304) | ratio | "
             "full page, caller's access asked again |", "|---|---|---|---|---|"]
    for name, cost in result["page_cost"].items():
        lines.append("| %s | %.3f ms | %.3f ms | %s | %.3f ms |" % (
            name, cost["full_cpu_ms"], cost["refresh_cpu_ms"], cost["ratio"],
            cost["full_new_caller_cpu_ms"]))
    today, conditional = result["browsers_today"], result["browsers_conditional"]
    unconditional = result["browsers_unconditional"]
    lines += ["", "| %d browsers every %gs (%s) | gateway CPU | less the churn's, a "
              "request | req/s | 304s | p50 / p95 (200) | p50 / p95 (304) | errors |"
              % (result["browsers"], result["interval"], result["load"]),
              "|---|---|---|---|---|---|---|---|",
              "| the churn alone | %.3f cores | | | | | | |" % result["background"]["cores"]]
    runs = [("no validator", unconditional), ("conditional", conditional)]
    if result.get("today_flags") is not None:
        runs.insert(0, ("today (no validator, %s; the churn alone %.3f cores)" % (
            " ".join(result["today_flags"] + (["from " + result["today_tree"]]
                                              if result.get("today_tree") else [])),
            result["background_today"]["cores"]), today))
    for name, run in runs:
        errors = {c: n for c, n in run["by_code"].items() if c not in ("200", "304")}
        lines.append("| %s | %.3f cores | %s ms | %s | %s | %s / %s ms | %s / %s ms | %s |" % (
            name, run["cores"], run["net_cpu_ms_per_request"], run["rps"], run["share_304"],
            run["p50_200_ms"], run["p95_200_ms"], run["p50_304_ms"], run["p95_304_ms"],
            errors or "none"))
    lines.append("| conditional / today | %s | %s | | | | | |" % (result["cpu_ratio"],
                                                               result["net_cpu_ratio"]))
    lines += ["", "304s by kind (conditional): %s; access reviews a second: %s today, %s "
              "no validator, %s conditional" % (
                  conditional["share_304_by_kind"], today["access_reviews_per_s"],
                  unconditional["access_reviews_per_s"], conditional["access_reviews_per_s"])]
    subs = result.get("subscribers")
    if subs:
        lat = subs["notice_latency"]
        lines += ["", "| %d subscribers | |" % subs["subscribers"], "|---|---|",
                  "| RSS added | %s KiB a subscriber (%s -> %s MiB) |" % (
                      subs["kib_per_subscriber"], subs["rss_before_mib"],
                      subs["rss_subscribed_mib"]),
                  "| notice after a pod changed (%d probes) | p50 %s ms, p95 %s ms, max %s ms "
                  "(%d heard, %d missed) |" % (subs["probes"], lat["p50_ms"], lat["p95_ms"],
                                               lat["max_ms"], lat["n"], lat["missed"]),
                  "| soak with the churn (%ss) | RSS %s MiB (growth %s), %s cores, %s notices "
                  "in all |" % (result["soak_seconds"], subs["soak_rss_mib"],
                                subs.get("soak_rss_growth_mib"), subs["soak_cores"],
                                subs["notices_total"]),
                  "| refused / closed early | %s / %s |" % (subs["refused"],
                                                           subs["closed_early_count"])]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description="issue #40 benchmark: refreshes and notices")
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--churn", type=float, default=200.0, help="pod changes a second")
    parser.add_argument("--event-rate", type=float, default=50.0,
                        help="events added (and as many expiring) a second")
    parser.add_argument("--browsers", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=5.0,
                        help="seconds between a browser's refreshes (the web UI's default)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="length of each browsers' run")
    parser.add_argument("--page-requests", type=int, default=300)
    parser.add_argument("--background-seconds", type=float, default=30.0,
                        help="the churn alone, no client: its CPU is taken out of the runs'")
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--probes", type=int, default=15,
                        help="pod changes whose notices are timed, %gs apart" % PROBE_EVERY)
    parser.add_argument("--soak-seconds", type=float, default=600.0)
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--budget", type=float, default=600.0,
                        help="bound of the wait for the gateway to be ready, seconds")
    parser.add_argument("--gateway-flag", action="append", default=[],
                        help="a flag added to the gateway's (repeatable), e.g. "
                             "--gateway-flag=--access-cache-ttl=30s")
    parser.add_argument("--today-flag", action="append", default=None,
                        help="\"today\" is run on a second gateway with these flags added "
                             "(repeatable; default --access-cache-max-age=0: access answers "
                             "last --access-cache-ttl only, as before they were kept while "
                             "RBAC is unchanged); --today-flag= (empty): today on the same "
                             "gateway")
    parser.add_argument("--today-tree", default=None,
                        help="\"today\" is run from this checkout of the project (e.g. a "
                             "worktree of the commit before issue #40's work), with no flag "
                             "of its own unless --today-flag says")
    parser.add_argument("--new-connections", action="store_true",
                        help="each request of a browser on a new connection (Tornado's "
                             "client), instead of the connection a browser keeps")
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args(argv)
    kept = not args.new_connections
    if args.today_flag is None:
        args.today_flag = [] if args.today_tree else ["--access-cache-max-age=0"]
    elif args.today_flag == [""]:
        args.today_flag = None
    result = {"pods": args.pods, "browsers": args.browsers, "interval": args.interval,
              "connections": "kept" if kept else "new for each request",
              "gateway_flags": args.gateway_flag,
              "soak_seconds": args.soak_seconds,
              "load": "churn %g pods/s, %g events/s" % (args.churn, args.event_rate),
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    standin = bench_scale.StandIn(args.pods, max_seconds=3 * 3600, composed=True,
                                  event_rate=0)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-live-") as directory:
            standin.admin("churn", rate=0)
            gw = bench_scale.start_gateway(standin, directory, args.gateway_flag)
            try:
                result["ready_s"] = round(bench_scale.wait_ready(gw, args.budget), 1)
                log("gateway ready in %.1fs" % result["ready_s"])
                result["page_cost"] = page_cost(gw, args.page_requests)
                standin.admin("churn", rate=args.churn)
                standin.admin("events", rate=args.event_rate)
                pages = pages_for(args.browsers)
                # warmed as today's gateway is below, before the churn alone is measured: the
                # browsers' sorts built (their upkeep is then the churn's), first reviews asked
                browsers(gw, standin, pages, args.interval, min(args.seconds, 30.0), False,
                         args.client_processes, kept)
                result["background"] = background(gw, args.background_seconds)
                log("the churn alone: %s" % result["background"])
                for mode, conditional in (("unconditional", False), ("conditional", True)):
                    found = browsers(gw, standin, pages, args.interval, args.seconds,
                                     conditional, args.client_processes, kept)
                    found["net_cpu_ms_per_request"] = net_ms(found, result["background"])
                    result["browsers_" + mode] = found
                    log("browsers, %s: %s" % (mode, json.dumps(found)))
                if args.subscribers:
                    result["subscribers"] = subscribers(
                        gw, standin, pages_for(args.subscribers, seed=41, watchable=True),
                        args.client_processes, args.soak_seconds, args.churn, args.event_rate,
                        args.probes)
                result["rss_end_mib"] = round(memory(gw.proc.pid)[0] or 0, 1)
            finally:
                gw.stop()
            if args.today_flag is not None:   # today's gateway, for the same browsers
                result["today_flags"] = args.today_flag
                result["today_tree"] = args.today_tree
                standin.admin("churn", rate=0)   # as the first gateway started: quiet
                standin.admin("events", rate=0)
                gw = bench_scale.start_gateway(standin, directory,
                                               args.gateway_flag + args.today_flag,
                                               root=args.today_tree)
                try:
                    bench_scale.wait_ready(gw, args.budget)
                    standin.admin("churn", rate=args.churn)
                    standin.admin("events", rate=args.event_rate)
                    # warmed as the first gateway was (not measured)
                    browsers(gw, standin, pages, args.interval, min(args.seconds, 30.0), False,
                             args.client_processes, kept)
                    result["background_today"] = background(gw, args.background_seconds)
                    found = browsers(gw, standin, pages, args.interval, args.seconds, False,
                                     args.client_processes, kept)
                    found["net_cpu_ms_per_request"] = net_ms(found, result["background_today"])
                    result["browsers_today"] = found
                    log("browsers, today: %s" % json.dumps(found))
                finally:
                    gw.stop()
            else:
                result["browsers_today"] = result["browsers_unconditional"]
                result["background_today"] = result["background"]
            today, conditional = result["browsers_today"], result["browsers_conditional"]
            result["cpu_ratio"] = round(conditional["cores"] / today["cores"], 3) \
                if today["cores"] else None
            net = [today["net_cpu_ms_per_request"], conditional["net_cpu_ms_per_request"]]
            result["net_cpu_ratio"] = round(net[1] / net[0], 3) if net[0] else None
    finally:
        standin.stop()
    result["table"] = table(result)
    return bench_scale.report(result, args.json)


if __name__ == "__main__":
    main()
