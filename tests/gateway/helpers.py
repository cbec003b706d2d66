"""Helpers of the gateway service tests."""

import json
import re


def full_log(gw):
    with open(gw.log_path, errors="replace") as f:
        return f.read()


def audit_lines(gw):
    """The audit entries a gateway wrote to its log, one JSON line each (audit/trail.py)."""
    out = []
    for line in full_log(gw).splitlines():
        if line.startswith('{"id":'):
            out.append(json.loads(line))
    return out


def assert_error(reply, code, reason=None, message_has=()):
    """The JSON error body of the specification."""
    assert reply.status == code, reply
    body = reply.json()
    assert body["status"] == "Failure" and body["code"] == code, body
    assert isinstance(body["message"], str) and body["message"], body
    if reason:
        assert body["reason"] == reason, body
    for text in message_has:
        assert text in body["message"], body
    return body


def apiserver_count(cluster, resource, verb="POST"):
    """How many `verb` requests on `resource` the API server has served (its own /metrics)."""
    status, text = cluster.request("GET", "/metrics", raw=True)
    assert status == 200
    total = 0
    for line in text.decode().splitlines():
        if line.startswith("apiserver_request_total{") and 'resource="%s"' % resource in line \
                and 'verb="%s"' % verb in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def metric_value(text, name, **labels):
    """The value of the sample `name` whose labels include `labels` (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{(.*)\} (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        have = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        if all(have.get(k) == str(v) for k, v in labels.items()):
            total += float(m.group(3))
    return total
