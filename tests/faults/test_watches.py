"""Dead connections are noticed (issue 27, item 2): a watch whose connection was silently
dropped (no FIN, no RST: a NAT or a firewall forgot it) is closed once it has heard neither an
event nor a bookmark for --watch-idle-timeout, and resumed from its last resourceVersion; what
was made meanwhile is listed without a restart, and /metrics says how quiet each watch is."""

import secrets
import time

from tests.faults.conftest import DEADLINE, MARGIN, WATCH_IDLE, timed
from tests.gateway.helpers import metric_value
from tests.resources import kube


def listed(gw, token, namespace, name):
    """Whether the gateway's deployment list of ``namespace`` has ``name``; each answer is a
    200 or a JSON error, within the deadline and a margin."""
    reply, seconds = timed(gw.get, "/api/v1/deployment/" + namespace, token=token)
    assert seconds < DEADLINE + MARGIN, (seconds, reply)
    if reply.status != 200:
        body = reply.json()
        assert body["status"] == "Failure" and reply.status in (503, 504), body
        return False
    return name in [d["objectMeta"]["name"] for d in reply.json()["deployments"]]


def test_a_silently_dropped_watch_is_noticed_and_resumed(cluster, proxy, faulty, namespace):
    token = cluster.admin_token
    kube.apps(cluster, namespace, "deployments", "before", {"app": "before"})
    cluster.wait_for(lambda: listed(faulty, token, namespace, "before"), timeout=10,
                     what="the first deployment in the gateway's list")
    silent_before = metric_value(faulty.get("/metrics").data.decode(),
                                 "dashboard_cache_watch_silent", kind="deployment")
    proxy.drop()
    dropped = time.monotonic()
    name = "after-" + secrets.token_hex(3)
    kube.apps(cluster, namespace, "deployments", name, {"app": name})  # not through the proxy
    quiet = []
    while not listed(faulty, token, namespace, name):
        assert time.monotonic() - dropped < WATCH_IDLE + 10, \
            "the dropped watch was not resumed within %gs" % (WATCH_IDLE + 10)
        text = faulty.get("/metrics").data.decode()
        quiet.append(metric_value(text, "dashboard_cache_watch_quiet_seconds",
                                  kind="deployment"))
        time.sleep(0.2)
    noticed = time.monotonic() - dropped
    print("dropped watch: the deployment made after the drop listed after %.1fs "
          "(idle limit %gs)" % (noticed, WATCH_IDLE))
    assert noticed >= WATCH_IDLE * 0.5   # the cache really had lost its watch
    text = faulty.get("/metrics").data.decode()
    assert metric_value(text, "dashboard_cache_watch_silent", kind="deployment") \
        > silent_before
    assert max(quiet) >= WATCH_IDLE * 0.5, quiet   # /metrics showed the watch going quiet
    assert "heard nothing for" in faulty.log(whole=True)
