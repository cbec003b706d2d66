"""Every shape behind --web-ui-compat, next to the specification's shape of the same request
on a gateway without the switch (the ``gateway`` fixture)."""

import pytest

from tests.logs.kube import create, file_lines, run_pod

BIG = 2_000_000_000  # the web UI's maxLogSize
PER_VIEW = 100       # the web UI's logsPerView
UNAUTHORIZED = "MSG_LOGIN_UNAUTHORIZED_ERROR"
TEXT = "text/plain; charset=utf-8"


@pytest.fixture(scope="module")
def counted(cluster):
    """A pod whose container wrote two start-up lines and 'line 1'..'line 350'."""
    namespace = cluster.new_namespace("compatlogs")
    run_pod(cluster, namespace, "counter", annotations={"log-lines": 350})
    lines = cluster.wait_for(lambda: (lambda got: got if len(got) == 352 else None)(
        file_lines(cluster, namespace, "counter", "app")), what="350 log lines")
    yield namespace, lines
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")


def view(gw, token, namespace, pod="counter", **params):
    reply = gw.get("/api/v1/log/%s/%s/app" % (namespace, pod), token, params=params)
    assert reply.status == 200, reply
    return reply.json()


def objects(lines):
    return [{"timestamp": ts, "content": text} for ts, text in lines]


def test_log_lines_are_upstream_log_line_objects(ui_gateway, gateway, admin_token, counted):
    namespace, lines = counted
    compat = view(ui_gateway, admin_token, namespace)
    assert compat["logs"] == objects(lines[-100:])
    spec = view(gateway, admin_token, namespace)
    assert spec["logs"] == [text for _, text in lines[-100:]]
    # Everything but the lines is the same.
    assert {k: v for k, v in compat.items() if k != "logs"} == \
        {k: v for k, v in spec.items() if k != "logs"}
    # The timestamp is the object's own field: the content never carries it.
    stamped = view(ui_gateway, admin_token, namespace, timestamps="true")
    assert stamped["logs"] == objects(lines[-100:])
    assert view(gateway, admin_token, namespace, timestamps="true")["logs"] == \
        ["%s %s" % line for line in lines[-100:]]


def line_num(lines, index):
    """The reference point naming lines[index]: its place from the start of its timestamp run."""
    ts = lines[index][0]
    return ts, index - min(i for i, (t, _) in enumerate(lines) if t == ts) + 1


def test_paging_as_the_web_ui_pages(ui_gateway, admin_token, counted):
    namespace, lines = counted

    def ask(position, timestamp, num, offset_from, offset_to):
        return view(ui_gateway, admin_token, namespace, logFilePosition=position,
                    referenceTimestamp=timestamp, referenceLineNum=num,
                    offsetFrom=offset_from, offsetTo=offset_to)

    def shift(selection, by):
        ref = selection["referencePoint"]
        return ask(selection["logFilePosition"], ref["timestamp"], ref["lineNum"],
                   selection["offsetFrom"] + by, selection["offsetTo"] + by)

    newest = ask("end", "newest", 0, BIG, BIG + PER_VIEW)
    assert newest["logs"] == objects(lines[-100:])
    assert newest["info"]["toDate"] == lines[-1][0]
    older = shift(newest["selection"], -PER_VIEW)
    assert older["logs"] == objects(lines[152:252])
    newer = shift(older["selection"], PER_VIEW)
    assert newer["logs"] == newest["logs"]
    oldest = ask("beginning", "oldest", 0, -BIG - PER_VIEW, -BIG)
    assert oldest["logs"] == objects(lines[:100])
    assert oldest["selection"]["logFilePosition"] == "beginning"
    assert shift(oldest["selection"], PER_VIEW)["logs"] == objects(lines[100:200])
    # A page's first and last lines named as reference points: the pages either side of it.
    first = line_num(lines, 152)
    assert older["logs"][0]["timestamp"] == first[0]
    assert ask("end", *first, -PER_VIEW, 0)["logs"] == objects(lines[52:152])
    last = line_num(lines, 251)
    assert ask("end", *last, 1, 1 + PER_VIEW)["logs"] == objects(lines[252:352])


def grant_pod_reading(cluster, namespace, user):
    """Lets ``user`` get pods in ``namespace``, but not their logs."""
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/%s/" % namespace
    create(cluster, rbac + "roles", {"metadata": {"name": "pod-reader"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
    create(cluster, rbac + "rolebindings", {
        "metadata": {"name": "pod-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                    "name": "pod-reader"},
        "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]})


def test_why_there_is_no_log_is_the_log_text(ui_gateway, gateway, admin_token, norights_token,
                                             cluster, namespace):
    run_pod(cluster, namespace, "steady")
    # A caller who may read the pod but not its log: opening the log fails at the API server.
    grant_pod_reading(cluster, namespace, "nobody")
    pod = "/api/v1/namespaces/%s/pods/steady" % namespace
    cluster.wait_for(lambda: cluster.request("GET", pod, token=norights_token)[0] == 200,
                     what="the pod-reader role in force")
    refused = gateway.get("/api/v1/log/%s/steady/app" % namespace, norights_token)
    assert refused.status == 403, refused
    assert 'cannot get resource "pods/log"' in refused.json()["message"]
    body = view(ui_gateway, norights_token, namespace, "steady")
    assert body["logs"] == [{"timestamp": "0", "content": refused.json()["message"]}]
    assert body["info"]["podName"] == "steady" and body["info"]["containerName"] == "app"
    # No previous instance: the same, where the switch off answers a 400.
    assert gateway.get("/api/v1/log/%s/steady/app" % namespace, admin_token,
                       params={"previous": "true"}).status == 400
    previous = view(ui_gateway, admin_token, namespace, "steady", previous="true")
    [line] = previous["logs"]
    assert line["timestamp"] == "0" and "no previous instance" in line["content"]
    # Errors before the log is opened stay errors: a missing pod, a missing container, a
    # caller without a token.
    assert ui_gateway.get("/api/v1/log/%s/gone/app" % namespace, admin_token).status == 404
    assert ui_gateway.get("/api/v1/log/%s/steady/nosuch" % namespace,
                          admin_token).status == 404
    assert ui_gateway.get("/api/v1/log/%s/steady/app" % namespace).status == 401


def test_a_401_of_an_api_route_is_the_text_the_ui_signs_out_on(ui_gateway, gateway, counted):
    namespace, _ = counted
    paths = ["/api/v1/pod/%s" % namespace, "/api/v1/log/%s/counter/app" % namespace,
             "/api/v1/namespace"]
    for path in paths:
        for token in (None, "not-a-valid-token"):
            reply = ui_gateway.get(path, token)
            assert reply.status == 401, (path, reply)
            assert reply.headers["Content-Type"] == TEXT
            assert reply.data == UNAUTHORIZED.encode()
            spec = gateway.get(path, token)
            assert spec.status == 401
            assert spec.json() == {"status": "Failure", "message": "Unauthorized",
                                   "reason": "Unauthorized", "code": 401}


def test_a_401_of_sign_in_and_settings_is_upstream_s_status_error(ui_gateway, gateway):
    err_status = {"metadata": {}, "status": "Failure", "message": UNAUTHORIZED,
                  "reason": "Unauthorized", "code": 401}
    for gw, compat in ((ui_gateway, True), (gateway, False)):
        me = gw.get("/api/v1/me", "not-a-valid-token")
        login = gw.request("POST", "/api/v1/login", body={"token": "not-a-valid-token"},
                           csrf="login")
        settings = gw.request("PUT", "/settings", "not-a-valid-token",
                              body={"itemsPerPage": 10})
        for reply in (me, login, settings):
            assert reply.status == 401, reply
            assert reply.headers["Content-Type"].startswith("application/json")
            body = reply.json()
            if compat:
                assert body["ErrStatus"] == err_status
                assert body["message"] == UNAUTHORIZED
            else:
                assert "ErrStatus" not in body and body["message"] == "Unauthorized"


def test_other_errors_also_carry_err_status(ui_gateway, gateway, admin_token, norights_token,
                                            counted):
    namespace, _ = counted
    cases = [(norights_token, "/api/v1/pod/%s/counter" % namespace, {}, 403),
             (admin_token, "/api/v1/pod/%s/gone" % namespace, {}, 404),
             (admin_token, "/api/v1/pod/%s" % namespace, {"itemsPerPage": "many"}, 400)]
    for token, path, params, code in cases:
        spec = gateway.get(path, token, params=params)
        assert spec.status == code, spec
        assert {"status", "message", "reason", "code"} <= set(spec.json())
        assert "ErrStatus" not in spec.json()
        compat = ui_gateway.get(path, token, params=params)
        assert compat.status == code, compat
        body = compat.json()
        assert {k: body[k] for k in spec.json()} == spec.json()
        assert body["ErrStatus"] == dict(spec.json(), metadata={})
    forbidden = ui_gateway.get(cases[0][1], norights_token).json()["ErrStatus"]["message"]
    assert 'User "nobody" cannot get resource "pods"' in forbidden


def test_lists_and_the_shell_request_are_unchanged(ui_gateway, gateway, admin_token, counted):
    namespace, _ = counted
    path = "/api/v1/pod/%s" % namespace
    assert ui_gateway.get(path, admin_token).json()["pods"][0]["objectMeta"]["name"] == \
        gateway.get(path, admin_token).json()["pods"][0]["objectMeta"]["name"] == "counter"
    sources = "/api/v1/log/source/%s/counter/pod" % namespace
    assert ui_gateway.get(sources, admin_token).json() == gateway.get(sources,
                                                                       admin_token).json()
