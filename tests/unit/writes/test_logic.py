"""Pure logic of the writes: edit patches, the deploy form and file, image references, drain
plans, the audit line's user name."""

import base64
import json

import pytest

from dashboard_api.serving import requestlog
from dashboard_api.serving.errors import ApiError
from dashboard_api.writes import appdeploy, drainplan, patches


def test_diff_is_an_rfc7386_patch():
    live = {"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2], "gone": True}
    edited = {"a": 1, "b": {"c": 5, "d": 3}, "l": [2], "new": {"x": 1}}
    assert patches.diff(live, edited) == {"b": {"c": 5}, "l": [2], "new": {"x": 1},
                                          "gone": None}
    assert patches.diff(live, json.loads(json.dumps(live))) == {}


def test_edit_patch_keeps_server_fields_and_carries_the_live_version():
    live = {"metadata": {"name": "x", "resourceVersion": "7", "uid": "u",
                         "managedFields": [{"m": 1}], "labels": {"a": "1"}},
            "spec": {"replicas": 1}, "status": {"ready": 1}}
    edited = {"metadata": {"name": "x", "resourceVersion": "3", "labels": {"b": "2"}},
              "spec": {"replicas": 2}}
    assert patches.edit_patch(live, edited) == {
        "metadata": {"labels": {"a": None, "b": "2"}, "resourceVersion": "7"},
        "spec": {"replicas": 2}}
    same = {"metadata": {"name": "x", "resourceVersion": "1", "labels": {"a": "1"}},
            "spec": {"replicas": 1}}
    assert patches.edit_patch(live, same) == {}


FORM = {"name": "web", "containerImage": "nginx:1.19", "imagePullSecret": "pull",
        "containerCommand": "/bin/run", "containerCommandArgs": "--a  1 --b",
        "replicas": 2, "portMappings": [{"port": 80, "targetPort": 8080, "protocol": "TCP"}],
        "variables": [{"name": "K", "value": "V"}], "isExternal": False,
        "description": "a web", "namespace": "team-a", "memoryRequirement": "64Mi",
        "cpuRequirement": 0.25, "labels": [{"key": "k8s-app", "value": "web"}],
        "runAsPrivileged": False}


def test_app_objects_follow_the_form():
    ns, dep, svc = appdeploy.app_objects(FORM)
    assert ns == "team-a"
    assert dep["metadata"] == {"name": "web", "labels": {"k8s-app": "web"},
                               "annotations": {"description": "a web"}}
    assert dep["spec"]["replicas"] == 2
    assert dep["spec"]["selector"] == {"matchLabels": {"k8s-app": "web"}}
    [c] = dep["spec"]["template"]["spec"]["containers"]
    assert c["command"] == ["/bin/run"] and c["args"] == ["--a", "1", "--b"]
    assert c["resources"] == {"requests": {"cpu": "0.25", "memory": "64Mi"}}
    assert c["env"] == [{"name": "K", "value": "V"}]
    assert dep["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "pull"}]
    [port] = svc["spec"]["ports"]
    assert port["name"].startswith("tcp-80-8080-") and len(port["name"]) == 17
    assert svc["spec"]["type"] == "ClusterIP" and svc["spec"]["selector"] == {"k8s-app": "web"}
    _, _, none = appdeploy.app_objects(dict(FORM, portMappings=[]))
    assert none is None


@pytest.mark.parametrize("change, word", [
    ({"replicas": -1}, "replicas"), ({"replicas": "2"}, "replicas"),
    ({"replicas": True}, "replicas"), ({"name": "Bad_Name"}, "name"),
    ({"containerImage": None}, "containerImage"), ({"isExternal": "yes"}, "isExternal"),
    ({"portMappings": [{"port": 0, "targetPort": 1, "protocol": "TCP"}]}, "port"),
    ({"portMappings": [{"port": 1, "targetPort": 1, "protocol": "ICMP"}]}, "protocol"),
    ({"labels": [{"key": 1}]}, "labels")])
def test_bad_forms_are_400_naming_the_field(change, word):
    with pytest.raises(ApiError) as err:
        appdeploy.app_objects(dict(FORM, **change))
    assert err.value.code == 400 and word in err.value.message


def test_documents_of_yaml_and_json():
    docs = appdeploy.documents("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
                               "---\n---\n{\"apiVersion\": \"v1\", \"kind\": \"Secret\", "
                               "\"metadata\": {\"name\": \"b\"}}\n")
    assert [(i, d["kind"]) for i, d in docs] == [(1, "ConfigMap"), (3, "Secret")]
    for bad, says in (("a: [", "not valid YAML"), ("- 1\n", "document 1 is not an object"),
                      ("apiVersion: v1\nkind: X\n", "needs metadata.name"),
                      ("kind: X\nmetadata: {name: a}", "apiVersion"), ("  ", "required")):
        with pytest.raises(ApiError) as err:
            appdeploy.documents(bad)
        assert err.value.code == 400 and says in err.value.message, bad


@pytest.mark.parametrize("ref, problem", [
    ("nginx", ""), ("nginx:1.19", ""), ("registry.io:5000/team/app:v1", ""),
    ("busybox@sha256:" + "a" * 64, ""), ("", "repository name must have at least one component"),
    ("NGINX", "repository name must be lowercase"), ("nginx:", "invalid reference format"),
    ("a b", "invalid reference format"),
    ("x/" + "a" * 260, "repository name must not be more than 255 characters")])
def test_image_references(ref, problem):
    assert appdeploy.image_reference_problem(ref) == problem


def test_protocol_rule():
    assert appdeploy.protocol_valid("TCP", True) and appdeploy.protocol_valid("UDP", False)
    assert not appdeploy.protocol_valid("UDP", True)


def pod(name, owner=None, phase="Running", mirror=False, empty_dir=False):
    meta = {"name": name, "namespace": "n"}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "o", "controller": True}]
    if mirror:
        meta["annotations"] = {drainplan.MIRROR: "x"}
    spec = {"volumes": [{"name": "v", "emptyDir": {}}]} if empty_dir else {}
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def test_drain_plan_follows_kubectl():
    pods = [pod("rs", "ReplicaSet"), pod("ds", "DaemonSet"), pod("static", mirror=True),
            pod("bare"), pod("data", "ReplicaSet", empty_dir=True),
            pod("done", phase="Succeeded")]
    evict, skipped, refused = drainplan.plan(pods, drainplan.options({}))
    assert [p["metadata"]["name"] for p in evict] == ["rs", "bare", "data", "done"]
    assert [(p["metadata"]["name"], why) for p, why in skipped] == [
        ("ds", "managed by DaemonSet o"), ("static", "mirror pod")]
    assert refused == []
    strict = drainplan.options({"force": False, "ignoreAllDaemonSets": False,
                                "deleteEmptyDirData": False})
    evict, skipped, refused = drainplan.plan(pods, strict)
    assert [p["metadata"]["name"] for p in evict] == ["rs", "done"]
    assert [p["metadata"]["name"] for p, _ in refused] == ["ds", "bare", "data"]


def test_drain_options_defaults_and_bad_values():
    assert drainplan.options({}) == {"force": True, "timeout": 120 * 10 ** 9,
                                     "gracePeriodSeconds": -1, "ignoreAllDaemonSets": True,
                                     "deleteEmptyDirData": True}
    for bad in (None, [], {"force": "yes"}, {"timeout": 0}, {"timeout": "5s"},
                {"gracePeriodSeconds": -5}):
        with pytest.raises(ApiError) as err:
            drainplan.options(bad)
        assert err.value.code == 400, bad


def jwt(payload):
    part = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    return "eyJhbGciOiJSUzI1NiJ9.%s.c2ln" % part


def test_audit_user_name_comes_from_the_request_only():
    sa = jwt({"sub": "system:serviceaccount:team-a:ci"})
    assert requestlog.user_name({"Authorization": "Bearer " + sa}) == \
        "system:serviceaccount:team-a:ci"
    assert requestlog.user_name({"Authorization": "Bearer opaque-static-token"}) == "unknown"
    assert requestlog.user_name({}) == "unknown"
    assert requestlog.user_name({"Authorization": "Bearer " + sa, "Impersonate-User": "bob"}) \
        == "system:serviceaccount:team-a:ci (impersonating bob)"
