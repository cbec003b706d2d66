"""The search query as every list's name filter (issue #38) on the pass-through path: the same
answers as from the watch cache (tests/resources/test_search_filter.py)."""

from tests.resources import searchcases


def test_every_term_on_the_lists_passed_through(cluster, gateway, namespace, admin_token):
    label = searchcases.seed(cluster, namespace)
    searchcases.check(gateway, admin_token, namespace, label)
    searchcases.bad_query(gateway, "/api/v1/pod/" + namespace, admin_token)


def test_the_search_route_lists_only_the_kinds_it_names(cluster, gateway, namespace,
                                                        admin_token):
    """Nothing is cached on this path: a search reads no kind unless ``kind:`` names it (each
    such kind is a LIST of the caller's own, at most three of them); the others are skipped,
    with why."""
    label = searchcases.seed(cluster, namespace)

    def search(q):
        reply = gateway.get("/api/v1/search", token=admin_token, params={"q": q})
        assert reply.status == 200, (q, reply)
        return reply.json()
    body = search(label)
    assert body["items"] == [] and body["kinds"] == []
    assert all("not in the gateway's cache" in s["reason"] for s in body["skipped"]
               if s["kind"] != "event")
    # the first three in the table's order are listed: pods, deployments, services
    body = search(label + " kind:configmap|deployment|service|pod")
    found = sorted((i["kind"], i["objectMeta"]["name"]) for i in body["items"])
    assert found[0] == ("deployment", "web") and found[1:4] == [
        ("pod", "db-0"), ("pod", "stuck"), ("pod", "web-1")], found
    assert len(found) == body["listMeta"]["totalItems"] == 5
    assert [(k["kind"], k["totalItems"]) for k in body["kinds"]] == [
        ("pod", 4), ("deployment", 1), ("service", 0)]
    assert [s["kind"] for s in body["skipped"]] == ["configmap"]
    assert "at most 3 kinds" in body["skipped"][0]["reason"]
    body = search(label + " kind:configmap")
    assert [(i["kind"], i["objectMeta"]["name"]) for i in body["items"]] == [
        ("configmap", "web-config")]
