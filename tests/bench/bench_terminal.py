"""Benchmark: keystroke round trip and memory per terminal with many terminals open.

Run from the project root (starts its own local cluster, under a minute in all):

    .venv/bin/python -m tests.bench.bench_terminal [--sessions 50] [--keystrokes 400]
        [--transport websocket|xhr-streaming|xhr-polling|eventsource]

The real sockjs-client (node) opens `--sessions` terminals through the gateway, the API server
and the node simulator's exec (bash in a pty), all open at once. Then:

* keystroke round trip: one key at a time, round-robin over the open terminals, from the
  client's send to the echoed character's arrival (both stamped in the client); then the same
  with every terminal typing at once. For comparison, the same echo over an exec WebSocket
  opened straight at the API server (no gateway, no SockJS).
* memory: the gateway's resident set with every terminal open minus before, per terminal;
  its open descriptors and threads too.
"""

import argparse
import asyncio
import os
import statistics
import time

import tornado.httpclient
import tornado.websocket

from dashboard_api.terminal.execstream import PROTOCOL, exec_url
from tests.cluster.controlplane import LocalCluster
from tests.support.gateway import Gateway
from tests.terminal.conftest import CONTAINER, create_pods
from tests.terminal.jsclient import JsClient, new_session, sockjs_url


def proc_status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(label, millis):
    return "%-44s median %6.2f ms  p95 %6.2f ms  max %6.2f ms  (n=%d)" % (
        label, statistics.median(millis), percentile(millis, 0.95), max(millis), len(millis))


def next_event(js, name, kind, timeout=10):
    """The client's timestamp of the next `kind` event ("message": output frame, "sent": a send
    confirmed) of terminal `name`."""
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "no %s event on %s" % (kind, name)
        event = js.pump(0.5)
        if event and event.get("name") == name and event["event"] == kind:
            return event["t"]


def one_at_a_time(js, names, keystrokes):
    millis = []
    for n in range(keystrokes):
        name = names[n % len(names)]
        js.stdin(name, "x")
        sent = next_event(js, name, "sent")
        millis.append(next_event(js, name, "message") - sent)
    return millis


def all_at_once(js, names, rounds):
    millis = []
    for _ in range(rounds):
        for name in names:
            js.stdin(name, "y")
        sent, echoed = {}, {}
        deadline = time.monotonic() + 30
        while len(echoed) < len(names):
            assert time.monotonic() < deadline, "echoes missing under load"
            event = js.pump(0.5)
            if not event or event.get("name") not in names:
                continue
            if event["event"] == "sent":
                sent[event["name"]] = event["t"]
            elif event["event"] == "message" and event["name"] in sent:
                echoed.setdefault(event["name"], event["t"])
        millis.extend(echoed[name] - sent[name] for name in names)
    return millis


async def direct_exec(cluster, namespace, pod, keystrokes):
    """The same echo over an exec WebSocket straight at the API server."""
    request = tornado.httpclient.HTTPRequest(
        exec_url(cluster.url, namespace, pod, CONTAINER, "bash"),
        headers={"Authorization": "Bearer " + cluster.admin_token},
        ca_certs=cluster.ca_file, request_timeout=10)
    ws = await tornado.websocket.websocket_connect(request, subprotocols=[PROTOCOL])

    async def output(timeout=10):
        while True:
            message = await asyncio.wait_for(ws.read_message(), timeout)
            assert message is not None, "exec stream ended"
            if message[0] == 1 and len(message) > 1:
                return message[1:]

    ws.write_message(b"\x00stty -echoctl; echo ready-$((1+1))\r", binary=True)
    buffered = b""
    while b"ready-2" not in buffered:
        buffered += await output()
    await asyncio.sleep(0.3)
    while True:  # drain the prompt
        try:
            await output(timeout=0.3)
        except asyncio.TimeoutError:
            break
    millis = []
    for _ in range(keystrokes):
        start = time.perf_counter()
        ws.write_message(b"\x00x", binary=True)
        await output()
        millis.append((time.perf_counter() - start) * 1000)
    ws.write_message(b"\x00\x15exit\r", binary=True)
    ws.close()
    return millis


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--keystrokes", type=int, default=400)
    parser.add_argument("--transport", default="websocket")
    args = parser.parse_args()

    cluster = LocalCluster.start(nodes=1)
    gw = js = None
    try:
        namespace = cluster.new_namespace("bench-term")
        create_pods(cluster, namespace, {"web": "nginx:1.19"})
        gw = Gateway.start(cluster)
        js = JsClient()
        pid = gw.proc.pid

        # Warm up: one terminal opened and closed, so imports and pools are in place.
        warm = new_session(gw, cluster.admin_token, namespace, "web")
        js.open("warm", sockjs_url(gw, warm), bind=warm, transports=[args.transport])
        js.stdin("warm", "echo warm-$((2+2))\r")
        js.wait_output("warm", "warm-4")
        js.stdin("warm", "exit\r")
        js.wait_closed("warm")
        time.sleep(1)
        rss_before, fds_before = proc_status(pid, "VmRSS"), len(os.listdir("/proc/%d/fd" % pid))
        threads_before = proc_status(pid, "Threads")

        names = ["s%d" % n for n in range(args.sessions)]
        started = time.monotonic()
        for name in names:
            session_id = new_session(gw, cluster.admin_token, namespace, "web")
            js.open(name, sockjs_url(gw, session_id), bind=session_id,
                    transports=[args.transport])
        for n, name in enumerate(names):
            js.stdin(name, "echo ready-$((%d+1000))\r" % n)
        for n, name in enumerate(names):
            js.wait_output(name, "ready-%d" % (n + 1000), timeout=60)
        all_open = time.monotonic() - started
        time.sleep(1)
        while js.pump(0.2):
            pass  # prompts
        rss_open = proc_status(pid, "VmRSS")
        fds_open = len(os.listdir("/proc/%d/fd" % pid))
        threads_open = proc_status(pid, "Threads")

        sequential = one_at_a_time(js, names, args.keystrokes)
        concurrent = all_at_once(js, names, max(1, args.keystrokes // len(names)))
        direct = asyncio.run(direct_exec(cluster, namespace, "web", min(args.keystrokes, 200)))
        rss_after_typing = proc_status(pid, "VmRSS")

        for name in names:
            js.stdin(name, "\x15exit\r")
        for name in names:
            js.wait_closed(name, timeout=30)

        print("terminal benchmark: %d terminals over %s, bash in the node simulator"
              % (args.sessions, args.transport))
        print("  all %d open and answering in %.2f s" % (args.sessions, all_open))
        print("  " + summary("keystroke round trip, one key at a time", sequential))
        print("  " + summary("keystroke round trip, all typing at once", concurrent))
        print("  " + summary("same echo, exec WebSocket at the API server", direct))
        print("  gateway memory: %.1f MiB before, %.1f MiB with %d open (%.0f KiB a "
              "terminal), %.1f MiB after typing"
              % (rss_before / 1024, rss_open / 1024, args.sessions,
                 (rss_open - rss_before) / args.sessions, rss_after_typing / 1024))
        print("  gateway descriptors %d -> %d, threads %d -> %d"
              % (fds_before, fds_open, threads_before, threads_open))
    finally:
        if js:
            js.stop()
        if gw:
            gw.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
