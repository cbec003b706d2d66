"""GET /api/v1/log/file/{namespace}/{pod}/{container}: the whole log as a text download."""

import re

from tests.logs.kube import instances, log_file, restart_count, run_pod, wait_pod

TIMESTAMP = re.compile(rb"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z ", re.M)


def download(gateway, token, namespace, pod, container, **params):
    return gateway.get("/api/v1/log/file/%s/%s/%s" % (namespace, pod, container), token,
                       params=params)


def test_download_with_and_without_timestamps(gateway, admin_token, cluster, namespace):
    run_pod(cluster, namespace, "writer", annotations={"log-lines": 3000})
    cluster.wait_for(lambda: log_file(cluster, namespace, "writer", "app").endswith(b"line 3000\n"),
                     what="3000 lines")
    raw = log_file(cluster, namespace, "writer", "app")
    reply = download(gateway, admin_token, namespace, "writer", "app", timestamps="true")
    assert reply.status == 200, reply
    assert reply.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert reply.headers["Content-Disposition"] == \
        'attachment; filename="logs-from-app-in-writer.log"'
    assert reply.data == raw
    plain = download(gateway, admin_token, namespace, "writer", "app")
    assert plain.status == 200
    assert plain.data == TIMESTAMP.sub(b"", raw)
    assert plain.data.endswith(b"line 2999\nline 3000\n")


def test_download_compressed_when_asked(gateway, admin_token, cluster, namespace):
    import gzip
    run_pod(cluster, namespace, "writer", annotations={"log-lines": 500})
    cluster.wait_for(lambda: log_file(cluster, namespace, "writer", "app").endswith(b"line 500\n"),
                     what="500 lines")
    reply = gateway.http.request(
        "GET", gateway.url + "/api/v1/log/file/%s/writer/app" % namespace,
        headers={"Authorization": "Bearer " + admin_token, "Accept-Encoding": "gzip"},
        decode_content=False)
    assert reply.status == 200
    assert reply.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(reply.data).endswith(b"line 499\nline 500\n")


def test_download_of_the_previous_instance(gateway, admin_token, cluster, namespace):
    run_pod(cluster, namespace, "crashy", annotations={"crashloop": "app"})
    pod = wait_pod(cluster, namespace, "crashy", lambda p: restart_count(p, "app") >= 1,
                   what="a restart")
    assert pod
    reply = download(gateway, admin_token, namespace, "crashy", "app", previous="true")
    assert reply.status == 200, reply
    assert reply.headers["Content-Disposition"] == \
        'attachment; filename="logs-from-app-in-crashy-previous.log"'
    assert reply.data.endswith(b"fatal: simulated crash, exiting with code 1\n")
    previous = [log_file(cluster, namespace, "crashy", "app", i)
                for i in instances(cluster, namespace, "crashy", "app")[:-1]]
    assert reply.data in [TIMESTAMP.sub(b"", p) for p in previous]


def test_download_errors(gateway, admin_token, norights_token, cluster, namespace):
    run_pod(cluster, namespace, "steady")
    assert download(gateway, None, namespace, "steady", "app").status == 401
    forbidden = download(gateway, norights_token, namespace, "steady", "app")
    assert forbidden.status == 403 and "forbidden" in forbidden.json()["message"]
    assert download(gateway, admin_token, namespace, "steady", "other").status == 404
    assert download(gateway, admin_token, namespace, "gone", "app").status == 404
    no_previous = download(gateway, admin_token, namespace, "steady", "app", previous="true")
    assert no_previous.status == 400 and "no previous instance" in no_previous.json()["message"]
    assert download(gateway, admin_token, namespace, "steady", "app", timestamps="x").status == 400
