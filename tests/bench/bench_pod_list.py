"""Benchmark: a 2,000-pod list, sorted and paged through the gateway, against the API server's
own LIST of the same pods. Not part of the test suite.

    .venv/bin/python -m tests.bench.bench_pod_list [--pods 2000] [--rounds 10]

Starts the local cluster and a gateway, creates the pods in a fresh namespace (bound to a node
that does not exist, so nothing schedules or runs them), checks that the gateway's pages are the
right ones, and prints median times and the ratio gateway / apiserver LIST.
"""

import argparse
import concurrent.futures
import statistics
import sys
import time

import ujson

from tests.cluster.controlplane import LocalCluster
from tests.support.gateway import Gateway

NAMESPACE = "bench-pods"


def pod(i):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "bench-%05d" % i, "labels": {"app": "bench", "shard": str(i % 7)}},
            "spec": {"nodeName": "no-such-node",
                     "containers": [{"name": "app", "image": "example/app:1",
                                     "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}}


def create_pods(cluster, count):
    status, body = cluster.request("POST", "/api/v1/namespaces",
                                   {"metadata": {"name": NAMESPACE}})
    assert status in (201, 409), (status, body)
    cluster.service_account_token(NAMESPACE, "default")  # pods are refused until it exists

    def create(i):
        status, body = cluster.request("POST", "/api/v1/namespaces/%s/pods" % NAMESPACE, pod(i))
        assert status in (201, 409), (status, body)

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(create, range(count)))


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--pods", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=10)
    args = p.parse_args(argv)

    cluster = LocalCluster.start(nodes=1)
    gw = None
    try:
        t0 = time.perf_counter()
        create_pods(cluster, args.pods)
        print("created %d pods in %.1f s" % (args.pods, time.perf_counter() - t0))
        gw = Gateway.start(cluster)
        token = cluster.admin_token

        def apiserver_list():
            status, body = cluster.request("GET", "/api/v1/namespaces/%s/pods" % NAMESPACE,
                                           raw=True)
            assert status == 200
            return ujson.loads(body)["items"]

        raw = apiserver_list()
        assert len(raw) == args.pods, len(raw)
        names = sorted(o["metadata"]["name"] for o in raw)
        cases = [
            ("sortBy=d,creationTimestamp, 10 a page", {"sortBy": "d,creationTimestamp",
                                                       "itemsPerPage": "10", "page": "1"}, None),
            ("sortBy=a,name page 17, 50 a page", {"sortBy": "a,name", "itemsPerPage": "50",
                                                  "page": "17"}, names[800:850]),
            ("sortBy=d,name page 1, 100 a page", {"sortBy": "d,name", "itemsPerPage": "100",
                                                  "page": "1"}, names[::-1][:100]),
            ("filterBy=name,bench-01 sortBy=a,status,a,name", {
                "filterBy": "name,bench-01", "sortBy": "a,status,a,name", "itemsPerPage": "10",
                "page": "2"}, [n for n in names if "bench-01" in n][10:20]),
        ]

        def through_gateway(params, expected):
            def call():
                reply = gw.get("/api/v1/pod/" + NAMESPACE, token=token, params=params)
                assert reply.status == 200, reply
                body = reply.json()
                got = [i["objectMeta"]["name"] for i in body["pods"]]
                assert expected is None or got == expected, (params, got[:3], expected[:3])
                assert body["listMeta"]["totalItems"] == (
                    args.pods if "filterBy" not in params else len([
                        n for n in names if params["filterBy"].split(",")[1] in n]))
                return body
            return call

        # Rounds interleave the cases so that drift of the machine hits them all alike.
        times = {"apiserver": []}
        for _ in range(args.rounds):
            times["apiserver"].append(timed(apiserver_list))
            for label, params, expected in cases:
                times.setdefault(label, []).append(timed(through_gateway(params, expected)))
        api = statistics.median(times.pop("apiserver"))
        print("apiserver LIST of %d pods (HTTP + ujson decode): median %.3f s" % (args.pods, api))
        for label, samples in times.items():
            median = statistics.median(samples)
            print("gateway %-48s median %.3f s  ratio %.2f" % (label, median, median / api))
    finally:
        if gw is not None:
            gw.stop()
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
