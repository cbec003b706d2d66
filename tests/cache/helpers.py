"""What the cache tests share: reading the gateway's cache series, comparing two gateways."""

import re
import time


def series(gateway, name):
    """{labels text: value} of one /metrics series of a one-cluster gateway (the labels
    without ``cluster``)."""
    text = gateway.get("/metrics").data.decode()
    return {re.sub(r'cluster="[^"]*",?', "", m.group(1)): float(m.group(2))
            for m in re.finditer(r"^%s\{([^}]*)\} (\S+)$" % re.escape(name), text, re.M)}


def kind_state(gateway, kind):
    for labels, value in series(gateway, "dashboard_cache_state").items():
        if 'kind="%s"' % kind in labels and value == 1:
            return re.search(r'state="(\w+)"', labels).group(1)
    return None


def wait_synced(gateway, kinds, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(kind_state(gateway, k) == "synced" for k in kinds):
            return
        time.sleep(0.1)
    raise AssertionError("not synced: %r" % {k: kind_state(gateway, k) for k in kinds})


def authorization_misses(gateway):
    return series(gateway, "dashboard_cache_authorization_checks").get('result="miss"', 0)


def body(gateway, path, token):
    reply = gateway.get(path, token=token)
    assert reply.status == 200, (path, reply)
    return reply.json()


def converge(cached, passthrough, paths, token, timeout=20):
    """Waits until the cached gateway answers every path exactly as the pass-through one; a
    watch event lags its write by milliseconds, and nodes keep changing, so a path agrees when
    the cached answer equals a pass-through answer read just before or just after it."""
    deadline = time.monotonic() + timeout
    pending = list(paths)
    last = {}
    while pending and time.monotonic() < deadline:
        for path in list(pending):
            before = body(passthrough, path, token)
            mine = body(cached, path, token)
            after = body(passthrough, path, token)
            if mine in (before, after):
                pending.remove(path)
            else:
                last[path] = (mine, after)
        if pending:
            time.sleep(0.2)
    assert not pending, {p: last.get(p) for p in pending}
