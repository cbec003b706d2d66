"""The search query language (query/search.py): its parser's answers and errors, and what each
term matches of real kinds' rows. The same answers from the watch cache and from rows in memory
are tests/unit/cache/test_view_search.py."""

import asyncio

import pytest

from dashboard_api.cache.rows import row_of
from dashboard_api.kinds import table as kinds
from dashboard_api.query import listquery, search
from dashboard_api.query.page import ListedRows
from dashboard_api.query.rows import Row
from dashboard_api.serving.errors import ApiError
from dashboard_api.summaries.related import Related


def _pod(ns, name, labels=None, node="node-1", images=("nginx:1.19",), phase="Running",
         waiting=None, uid=None):
    statuses = [{"name": "c%d" % i, "ready": phase == "Running",
                 "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}
                for i in range(len(images))]
    return {"metadata": {"namespace": ns, "name": name, "labels": labels or {},
                         "uid": uid or ns + "/" + name,
                         "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"nodeName": node,
                     "containers": [{"name": "c%d" % i, "image": image}
                                    for i, image in enumerate(images)]},
            "status": {"phase": phase, "containerStatuses": statuses}}


PODS = [
    _pod("shop", "web-1", {"app": "web", "tier": "front"}, node="node-1"),
    _pod("shop", "Web-Admin", {"app": "web-admin"}, node="node-2", images=("REG/Admin:2",)),
    _pod("shop", "db-0", {"app": "db"}, node="node-2", images=("postgres:13", "busybox")),
    _pod("data", "crasher", {"app": "crash"}, waiting="CrashLoopBackOff", phase="Running"),
    _pod("data", "pending", {}, node="", phase="Pending"),
]


def names(query, objects=PODS, kind="pod", rel=None):
    """The names of ``objects`` (cache rows of ``kind``) that ``query`` matches."""
    spec = kinds.get(kind)
    rows = [row_of(spec, obj) for obj in objects]
    return [r.name for r in search.parse(query).bind(spec, rel).filter(rows)]


def test_a_plain_word_is_the_name_containing_it_ignoring_case():
    assert names("web") == ["web-1", "Web-Admin"]
    assert names("WEB adm") == ["Web-Admin"]
    assert names("name:web-a") == ["Web-Admin"]
    assert names("") == [p["metadata"]["name"] for p in PODS]
    assert names("nothing") == []


def test_labels_compare_exactly_as_selectors_do():
    assert names("label:app=web") == ["web-1"]
    assert names("label:app=web|db") == ["web-1", "db-0"]
    assert names("label:app!=web") == ["Web-Admin", "db-0", "crasher", "pending"]
    assert names("label:app!=web|db") == ["Web-Admin", "crasher", "pending"]
    assert names("label:tier") == ["web-1"]
    assert names("label:!app") == ["pending"]
    assert names("label:app=Web") == []     # values keep their case
    assert names("label:app=web label:tier=front web") == ["web-1"]


def test_namespace_node_image_status_and_kind():
    assert names("ns:data") == ["crasher", "pending"]
    assert names("ns:data|shop web") == ["web-1", "Web-Admin"]
    assert names("ns:data ns:shop") == []
    assert names("node:node-2") == ["Web-Admin", "db-0"]
    assert names("node:NODE-2 label:app=db") == ["db-0"]
    assert names("image:postgres") == ["db-0"]
    assert names("image:admin") == ["Web-Admin"]      # ignoring case
    assert names("image:busy|nginx") == ["web-1", "db-0", "crasher", "pending"]
    assert names("status:crash") == ["crasher"]        # the start of a word of the status
    assert names("status:CrashLoopBackOff") == ["crasher"]
    assert names("status:backoff") == []
    assert names("status:running") == ["web-1", "Web-Admin", "db-0"]
    assert names("status:pending|crash") == ["crasher", "pending"]
    assert names("kind:pod web") == names("kind:pods web") == ["web-1", "Web-Admin"]
    assert names("kind:deployment") == []               # a list of another kind: none


def test_terms_a_kind_lacks_match_none_of_its_rows():
    config_maps = [{"metadata": {"namespace": "shop", "name": "web-config",
                                 "labels": {"app": "web"}}}]
    assert names("web", config_maps, "configmap") == ["web-config"]
    assert names("label:app=web", config_maps, "configmap") == ["web-config"]
    for query in ("status:x", "node:node-1", "image:nginx", "web kind:pod"):
        assert names(query, config_maps, "configmap") == []
    assert names("web kind:configmap|pod", config_maps, "configmap") == ["web-config"]


def test_the_status_each_list_shows():
    nodes = [{"metadata": {"name": "n-ready"},
              "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
             {"metadata": {"name": "n-down"},
              "status": {"conditions": [{"type": "Ready", "status": "False"}]}},
             {"metadata": {"name": "n-cordoned"}, "spec": {"unschedulable": True},
              "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
             {"metadata": {"name": "n-new"}}]
    assert names("status:ready", nodes, "node") == ["n-ready", "n-cordoned"]
    assert names("status:notready", nodes, "node") == ["n-down"]
    assert names("status:unknown", nodes, "node") == ["n-new"]
    assert names("status:schedulingdisabled", nodes, "node") == ["n-cordoned"]
    jobs = [{"metadata": {"namespace": "b", "name": "done"},
             "status": {"conditions": [{"type": "Complete", "status": "True"}]}},
            {"metadata": {"namespace": "b", "name": "busy"}}]
    assert names("status:complete", jobs, "job") == ["done"]
    assert names("status:running", jobs, "job") == ["busy"]
    claims = [{"metadata": {"namespace": "b", "name": "c"}, "status": {"phase": "Bound"}}]
    assert names("status:bound", claims, "persistentvolumeclaim") == ["c"]
    namespaces = [{"metadata": {"name": "gone"}, "status": {"phase": "Terminating"}}]
    assert names("status:term", namespaces, "namespace") == ["gone"]


def test_a_workloads_status_is_its_bucket_in_the_list_status_from_its_pods():
    sets = [{"metadata": {"namespace": "shop", "name": name, "uid": "rs-" + name},
             "spec": {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}}
            for name, image in (("ok", "nginx"), ("stuck", "nginx"), ("bad", "redis"))]

    def owned(pod, owner):
        pod["metadata"]["ownerReferences"] = [{"uid": "rs-" + owner, "controller": True,
                                               "kind": "ReplicaSet", "name": owner}]
        return pod
    rel = Related()
    rel["pods"] = [owned(_pod("shop", "ok-1"), "ok"),
                   owned(_pod("shop", "stuck-1", phase="Pending"), "stuck"),
                   owned(_pod("shop", "bad-1", phase="Pending", uid="bad-1"), "bad")]
    rel["events"] = [{"metadata": {"name": "e"}, "type": "Warning", "reason": "BackOff",
                      "involvedObject": {"uid": "bad-1"}}]
    assert names("status:running", sets, "replicaset", rel) == ["ok"]
    assert names("status:pending", sets, "replicaset", rel) == ["stuck"]
    assert names("status:failed", sets, "replicaset", rel) == ["bad"]
    assert names("image:redis", sets, "replicaset") == ["bad"]
    assert search.parse("status:failed").reads_related(kinds.get("replicaset"))
    assert not search.parse("status:failed").reads_related(kinds.get("pod"))
    assert not search.parse("image:x label:a").reads_related(kinds.get("replicaset"))


def test_rows_in_memory_match_as_the_caches_rows():
    """A pass-through LIST's rows carry no name or keys until the selection makes them."""
    kind = kinds.get("pod")
    query = listquery.parse({"filterBy": "name,web label:app=web|web-admin", "page": "0"}.get)
    rows = ListedRows(kind, [Row(obj, None, None, None) for obj in PODS])

    async def inline(fn, *args):
        return fn(*args)
    page = asyncio.run(rows.page(query, False, Related(), inline))
    assert [r.obj["metadata"]["name"] for r in page.rows] == ["web-1", "Web-Admin"]
    assert page.total == 2


def test_equal_queries_are_equal_and_hash_alike():
    assert search.parse("web  label:app=web") == search.parse("web label:app=web")
    assert hash(search.parse("Web")) == hash(search.parse("web"))
    assert search.parse("web ns:a") != search.parse("ns:a web")   # order is kept
    assert search.parse("a").bind(kinds.get("pod")) == search.parse("a").bind(kinds.get("pod"))
    assert search.parse("a").bind(kinds.get("pod")) != search.parse("a").bind(
        kinds.get("node"))
    assert not search.parse("   ") and search.parse("x")
    q = search.parse("web label:app=x kind:pod|Deployment ns:a|b ns:b")
    assert q.words == ("web",)
    assert q.values("kind") == {"pod", "deployment"} and q.values("ns") == {"b"}
    assert q.values("status") is None


@pytest.mark.parametrize("query,named", [
    ("foo:bar", "'foo:bar': unknown prefix 'foo:'"),
    ("web system:node", "'system:node': unknown prefix 'system:'"),
    ("label:", "'label:': label: needs a value"),
    ("ns:", "needs a value"),
    ("label:-bad=x", "'-bad' is not a label key"),
    ("label:app=-x", "'-x' is not a label value"),
    ("label:app=a|-b", "'-b' is not a label value"),
    ("status:a||b", "an empty value"),
    ("kind:" + "|".join("k%d" % i for i in range(17)), "at most 16 alternatives"),
    ("x " * 17, "at most 16 terms"),
    ("x" * 257, "at most 256 characters"),
])
def test_a_malformed_query_is_a_400_naming_the_term(query, named):
    with pytest.raises(ApiError) as err:
        search.parse(query)
    assert err.value.code == 400 and err.value.reason == "BadRequest"
    assert named in err.value.message
    with pytest.raises(ApiError) as err:   # and so is a list's filter holding it
        listquery.parse({"filterBy": "name," + query}.get)
    assert err.value.code == 400 and named in err.value.message


def test_other_properties_and_an_empty_query_filter_as_before():
    q = listquery.parse({"filterBy": "status,Run,name,"}.get)
    assert q.filters == (("status", "Run"), ("name", search.Search()))
