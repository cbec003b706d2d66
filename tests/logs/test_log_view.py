"""GET /api/v1/log/{namespace}/{pod}[/{container}] against the local cluster: known log
content written by the node simulator, paged the way the upstream web UI pages it."""

import secrets
import time

import pytest

from tests.logs.kube import file_lines, restart_count, run_pod, wait_pod

BIG = 2_000_000_000  # the web UI's "maxLogSize"


@pytest.fixture
def counted(cluster, namespace):
    """A running pod whose container wrote 'line 1'..'line 250' after two start-up lines."""
    run_pod(cluster, namespace, "counter", annotations={"log-lines": 250})
    lines = cluster.wait_for(lambda: (lambda got: got if len(got) == 252 else None)(
        file_lines(cluster, namespace, "counter", "app")), what="250 log lines")
    return namespace, lines


def view(gateway, token, namespace, pod, container=None, **params):
    path = "/api/v1/log/%s/%s" % (namespace, pod) + ("/" + container if container else "")
    return gateway.get(path, token, params=params)


def texts(lines):
    return [text for _, text in lines]


def test_default_is_the_last_hundred_lines(gateway, admin_token, counted):
    namespace, lines = counted
    reply = view(gateway, admin_token, namespace, "counter", "app")
    assert reply.status == 200, reply
    body = reply.json()
    assert body["logs"] == ["line %d" % i for i in range(151, 251)]
    assert body["info"] == {"podName": "counter", "containerName": "app", "initContainerName": "",
                            "fromDate": lines[152][0], "toDate": lines[251][0],
                            "truncated": False}
    # Re-anchored on the middle line of the 252 read (index 126), last of its own timestamp.
    assert body["selection"] == {"referencePoint": {"timestamp": lines[126][0], "lineNum": -1},
                                 "offsetFrom": 152 - 126, "offsetTo": 252 - 126,
                                 "logFilePosition": "end"}


def test_first_container_when_none_is_named(gateway, admin_token, cluster, namespace):
    run_pod(cluster, namespace, "two", containers=("first", "second"))
    body = view(gateway, admin_token, namespace, "two").json()
    assert body["info"]["containerName"] == "first"
    assert body["logs"][0].startswith("starting container first ")
    second = view(gateway, admin_token, namespace, "two", "second").json()
    assert second["logs"][0].startswith("starting container second ")


def test_timestamps_on_and_off(gateway, admin_token, counted):
    namespace, lines = counted
    on = view(gateway, admin_token, namespace, "counter", "app", timestamps="true").json()
    assert on["logs"] == ["%s %s" % line for line in lines[-100:]]
    off = view(gateway, admin_token, namespace, "counter", "app", timestamps="false").json()
    assert off["logs"] == texts(lines[-100:])


def test_paging_like_the_web_ui(gateway, admin_token, cluster, counted):
    namespace, lines = counted
    newest = view(gateway, admin_token, namespace, "counter", "app", logFilePosition="end",
                  referenceTimestamp="newest", referenceLineNum=0, offsetFrom=BIG,
                  offsetTo=BIG + 100).json()
    assert newest["logs"] == texts(lines[-100:])

    def step(selection, by):
        return view(gateway, admin_token, namespace, "counter", "app",
                    logFilePosition=selection["logFilePosition"],
                    referenceTimestamp=selection["referencePoint"]["timestamp"],
                    referenceLineNum=selection["referencePoint"]["lineNum"],
                    offsetFrom=selection["offsetFrom"] + by,
                    offsetTo=selection["offsetTo"] + by).json()

    older = step(newest["selection"], -100)
    assert older["logs"] == texts(lines[52:152])
    oldest = step(older["selection"], -100)
    assert oldest["logs"] == texts(lines[:100])  # shifted to start at the first line
    # The selection names lines, not positions: new lines do not move the page.
    cluster.append_log(namespace, "counter", "app", ["late %d" % i for i in range(30)])
    again = step(older["selection"], 0)
    assert again["logs"] == older["logs"]
    newer = step(older["selection"], 100)
    assert newer["logs"] == texts(lines[152:252])


def test_oldest_page_reads_from_the_beginning(gateway, admin_token, counted):
    namespace, lines = counted
    body = view(gateway, admin_token, namespace, "counter", "app",
                logFilePosition="beginning", referenceTimestamp="oldest", referenceLineNum=0,
                offsetFrom=-BIG - 100, offsetTo=-BIG).json()
    assert body["logs"] == texts(lines[:100])
    assert body["info"]["truncated"] is False
    assert body["selection"]["logFilePosition"] == "beginning"
    # Without offsets, logFilePosition=beginning shows the first hundred lines too.
    plain = view(gateway, admin_token, namespace, "counter", "app",
                 logFilePosition="beginning").json()
    assert plain["logs"] == texts(lines[:100])


def test_reference_by_timestamp_and_line_number(gateway, admin_token, counted):
    namespace, lines = counted
    ts = lines[10][0]
    body = view(gateway, admin_token, namespace, "counter", "app", referenceTimestamp=ts,
                referenceLineNum=1, offsetFrom=0, offsetTo=3, logFilePosition="end").json()
    assert body["logs"] == texts(lines[10:13])
    assert (body["info"]["fromDate"], body["info"]["toDate"]) == (lines[10][0], lines[12][0])
    missing = view(gateway, admin_token, namespace, "counter", "app", referenceTimestamp=ts,
                   referenceLineNum=2, offsetFrom=0, offsetTo=3).json()
    assert missing["logs"] == [] and missing["info"]["fromDate"] == ""


def test_tail_lines(gateway, admin_token, counted):
    namespace, lines = counted
    body = view(gateway, admin_token, namespace, "counter", "app", tailLines=7).json()
    assert body["logs"] == texts(lines[-7:])
    assert body["info"]["truncated"] is True  # older lines exist
    body = view(gateway, admin_token, namespace, "counter", "app", tailLines=1000).json()
    assert body["logs"] == texts(lines)
    assert body["info"]["truncated"] is False
    assert view(gateway, admin_token, namespace, "counter", "app", tailLines=0).json()["logs"] == []


def test_since_time_to_the_nanosecond(gateway, admin_token, cluster, counted):
    namespace, lines = counted
    time.sleep(1.1)  # a later second than every line so far
    stamps = cluster.append_log(namespace, "counter", "app", ["after %d" % i for i in range(5)])
    body = view(gateway, admin_token, namespace, "counter", "app", sinceTime=stamps[2],
                timestamps="true").json()
    # The API server passes sinceTime on in whole seconds; the gateway drops the rest.
    assert body["logs"] == ["%s after %d" % (stamps[i], i) for i in (2, 3, 4)]
    assert body["info"]["truncated"] is False
    future = view(gateway, admin_token, namespace, "counter", "app",
                  sinceTime="2999-01-01T00:00:00Z").json()
    assert future["logs"] == []


def test_previous_instance_of_a_crash_looping_container(gateway, admin_token, cluster,
                                                       namespace):
    run_pod(cluster, namespace, "crashy", annotations={"crashloop": "app"})
    wait_pod(cluster, namespace, "crashy", lambda p: restart_count(p, "app") >= 1,
             what="a restart")
    body = view(gateway, admin_token, namespace, "crashy", "app", previous="true").json()
    assert body["logs"][-1] == "fatal: simulated crash, exiting with code 1"
    assert body["logs"][0].startswith("starting container app ")
    current = view(gateway, admin_token, namespace, "crashy", "app").json()
    assert current["logs"][0] != body["logs"][0]  # another instance number


def test_no_previous_instance_is_a_400(gateway, admin_token, cluster, namespace):
    run_pod(cluster, namespace, "steady")
    reply = view(gateway, admin_token, namespace, "steady", "app", previous="true")
    assert reply.status == 400, reply
    assert "no previous instance" in reply.json()["message"]


def test_errors(gateway, admin_token, norights_token, cluster, counted):
    namespace, _ = counted
    assert view(gateway, None, namespace, "counter", "app").status == 401
    forbidden = view(gateway, norights_token, namespace, "counter", "app")
    assert forbidden.status == 403
    assert 'User "nobody" cannot get resource "pods"' in forbidden.json()["message"]
    assert view(gateway, admin_token, namespace, "nopod", "app").status == 404
    unknown = view(gateway, admin_token, namespace, "counter", "nosuch")
    assert unknown.status == 404 and "nosuch" in unknown.json()["message"]
    for params in ({"offsetFrom": "x", "offsetTo": "1"}, {"offsetFrom": "1"},
                   {"logFilePosition": "middle"}, {"tailLines": "-1"}, {"previous": "maybe"},
                   {"sinceTime": "yesterday"}, {"timestamps": "2"},
                   {"tailLines": "5", "logFilePosition": "beginning"},
                   {"offsetFrom": "0", "offsetTo": "1", "referenceLineNum": "one"}):
        reply = view(gateway, admin_token, namespace, "counter", "app", **params)
        assert reply.status == 400, (params, reply)


def test_editor_reads_logs_only_in_its_namespace(gateway, editor_token, cluster, counted):
    namespace, _ = counted
    name = "edit-logs-" + secrets.token_hex(3)
    run_pod(cluster, cluster.editor_namespace, name)
    try:
        assert view(gateway, editor_token, cluster.editor_namespace, name, "app").status == 200
        assert view(gateway, editor_token, namespace, "counter", "app").status == 403
    finally:
        cluster.request("DELETE", "/api/v1/namespaces/%s/pods/%s" % (cluster.editor_namespace,
                                                                     name))


def test_read_limits_and_honest_truncation(gateway, admin_token, cluster, namespace):
    run_pod(cluster, namespace, "chatty")
    filler = "x" * 90
    cluster.append_log(namespace, "chatty", "app", ["n%05d %s" % (i, filler) for i in range(6000)])
    lines = file_lines(cluster, namespace, "chatty", "app")
    everything = dict(referenceTimestamp="newest", offsetFrom=-BIG, offsetTo=BIG)
    tail = view(gateway, admin_token, namespace, "chatty", "app", logFilePosition="end",
                **everything).json()
    assert tail["logs"] == texts(lines[-5000:])  # at most 5,000 lines from the end
    assert tail["info"]["truncated"] is True
    head = view(gateway, admin_token, namespace, "chatty", "app", logFilePosition="beginning",
                **everything).json()
    # At most 500,000 bytes from the beginning, whole lines only.
    assert head["logs"] == texts(lines[:len(head["logs"])])
    assert sum(len("%s %s\n" % line) for line in lines[:len(head["logs"])]) <= 500_000
    assert len(head["logs"]) > 3000 and head["info"]["truncated"] is True
    first = view(gateway, admin_token, namespace, "chatty", "app", logFilePosition="beginning",
                 referenceTimestamp="oldest", offsetFrom=0, offsetTo=100).json()
    assert first["logs"] == texts(lines[:100]) and first["info"]["truncated"] is False
