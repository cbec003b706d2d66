"""Every field a kind's builders return is named by its spec's wire schema (``item_fields``,
``detail_fields``), so /apidocs.json cannot drift from the summaries: each kind's item and
detail builders run on a bare object and on one that carries every optional field they read,
and the keys they return must all be declared."""

import pytest

from dashboard_api.app import apimodels
from dashboard_api.kinds import table as kinds
from dashboard_api.summaries.related import Related

TIME = "2024-05-01T10:00:00Z"
CONTAINERS = [{"name": "c", "image": "i", "env": [{"name": "K", "value": "v"}],
               "resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}]
CONDITIONS = [{"type": "Ready", "status": "True", "reason": "r", "message": "m",
               "lastTransitionTime": TIME}]


def bare(kind):
    return {"metadata": {"name": "x", "namespace": "ns" if kind.namespaced else None}}


def rich(kind):
    """One object with the optional fields every builder reads (each reads its own)."""
    meta = {"name": "x", "uid": "u", "labels": {"a": "b"}, "annotations": {"n": "v"},
            "creationTimestamp": TIME, "ownerReferences": [
                {"kind": "ReplicaSet", "name": "rs", "uid": "o", "controller": True}]}
    if kind.namespaced:
        meta["namespace"] = "ns"
    template = {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": CONTAINERS, "initContainers": CONTAINERS}}
    return {
        "metadata": meta, "type": "Opaque", "data": {"k": "dg=="}, "binaryData": {"b": "AA=="},
        "subjects": [{"kind": "User", "name": "u"}], "roleRef": {"kind": "Role", "name": "r"},
        "rules": [{"verbs": ["get"]}], "provisioner": "p", "parameters": {"k": "v"},
        "reclaimPolicy": "Delete", "mountOptions": ["ro"],
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u",
                           "fieldPath": "spec"},
        "count": 2, "reason": "r", "message": "m", "firstTimestamp": TIME,
        "lastTimestamp": TIME, "source": {"component": "c", "host": "h"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": template,
                 "jobTemplate": {"spec": {"template": template}}, "schedule": "* * * * *",
                 "suspend": False, "concurrencyPolicy": "Allow", "startingDeadlineSeconds": 5,
                 "parallelism": 1, "completions": 1, "containers": CONTAINERS,
                 "initContainers": CONTAINERS, "imagePullSecrets": [{"name": "s"}],
                 "nodeName": "n", "serviceAccountName": "sa", "taints": [{"key": "k"}],
                 "podCIDR": "10.0.0.0/24", "providerID": "p", "unschedulable": True,
                 "podSelector": {}, "ingress": [{}], "egress": [{}], "policyTypes": ["Ingress"],
                 "scopes": ["BestEffort"], "minAvailable": 1, "maxUnavailable": None,
                 "unhealthyPodEvictionPolicy": "IfHealthyBudget", "type": "ClusterIP",
                 "clusterIP": "10.0.0.1", "ports": [{"port": 80, "protocol": "TCP"}],
                 "sessionAffinity": "None", "capacity": {"storage": "1Gi"},
                 "accessModes": ["ReadWriteOnce"], "storageClassName": "s",
                 "claimRef": {"namespace": "ns", "name": "c"}, "volumeName": "v",
                 "resources": {"requests": {"storage": "1Gi"}}, "controller": "c",
                 "parameters": {"kind": "K", "name": "n"}, "group": "g", "scope": "Namespaced",
                 "names": {"kind": "K", "plural": "ks"}, "scaleTargetRef": {"kind": "Deployment",
                                                                           "name": "d"},
                 "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50,
                 "versions": [{"name": "v1", "served": True, "storage": True}],
                 "rules": [{"host": "h", "http": {"paths": [{"path": "/"}]}}],
                 "tls": [{"hosts": ["h"]}], "strategy": {"type": "RollingUpdate",
                                                         "rollingUpdate": {"maxSurge": 1}},
                 "minReadySeconds": 1, "revisionHistoryLimit": 2, "hostPath": {"path": "/"}},
        "status": {"phase": "Running", "conditions": CONDITIONS, "replicas": 2,
                   "readyReplicas": 1, "addresses": [{"type": "InternalIP", "address": "1.2.3.4"}],
                   "images": [{"names": ["i"]}], "capacity": {"cpu": "1"},
                   "allocatable": {"cpu": "1"}, "nodeInfo": {"kubeletVersion": "v1"},
                   "podIP": "1.2.3.5", "qosClass": "Burstable", "hard": {"pods": "1"},
                   "used": {"pods": "0"}, "active": [{"name": "j"}], "lastScheduleTime": TIME,
                   "currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0,
                   "expectedPods": 1, "disruptedPods": {"p": TIME}, "currentReplicas": 1,
                   "desiredReplicas": 1, "lastScaleTime": TIME,
                   "loadBalancer": {"ingress": [{"ip": "1.2.3.6"}]},
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 1,
                                          "state": {"running": {"startedAt": TIME}}}],
                   "acceptedNames": {"kind": "K"}},
    }


def fields_of(kind, obj, detail):
    rel = Related()
    if detail:
        rel = Related(owner=None)
        out = kind.detail(obj, rel)
    else:
        out = kind.item(obj, rel)
        if kind.finish is not None:
            kind.finish(out, obj, Related())
    return set(out)


def declared(kind, detail):
    base = {"objectMeta", "typeMeta"}
    if detail:
        return base | {"errors"} | set(kind.detail_fields)
    return base | set(kind.item_fields)


@pytest.mark.parametrize("kind", kinds.TABLE, ids=lambda k: k.name)
def test_items_return_only_declared_fields(kind):
    for obj in (bare(kind), rich(kind)):
        undeclared = fields_of(kind, obj, detail=False) - declared(kind, detail=False)
        assert not undeclared, "%s items return %s, not in its spec's item_fields" % (
            kind.name, sorted(undeclared))


@pytest.mark.parametrize("kind", [k for k in kinds.TABLE if k.detail is not None],
                         ids=lambda k: k.name)
def test_details_return_only_declared_fields(kind):
    for obj in (bare(kind), rich(kind)):
        undeclared = fields_of(kind, obj, detail=True) - declared(kind, detail=True)
        assert not undeclared, "%s details return %s, not in its spec's detail_fields" % (
            kind.name, sorted(undeclared))


def test_embedded_lists_and_metrics_are_in_the_schema():
    """What the pipeline adds is declared too: embedded lists and the metrics decorator's."""
    for kind in kinds.TABLE:
        if kind.metrics is not None:
            assert "metrics" in kind.item_fields, kind.name
            if kind.metrics.detail:
                assert {"metrics", "warning"} <= set(kind.detail_fields), kind.name
        for embed in kind.embeds:
            assert embed.field in kind.detail_fields, (kind.name, embed.field)


def test_the_document_names_the_declared_fields():
    for kind in kinds.TABLE:
        schema = apimodels.item_schema(kind)["properties"]
        assert set(kind.item_fields) <= set(schema), kind.name
        if kind.detail is not None:
            assert set(kind.detail_fields) <= set(apimodels.detail_schema(kind)["properties"])


def test_a_field_the_schema_does_not_name_fails(monkeypatch):
    """The check can fail: a builder that returns one more field is caught."""
    kind = kinds.get("configmap")
    monkeypatch.setattr(kind, "item", lambda obj, rel: dict(kinds.get("configmap").detail(
        obj, rel), surprise=1))
    assert "surprise" in fields_of(kind, rich(kind), detail=False) - declared(kind, False)
