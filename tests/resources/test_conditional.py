"""Conditional lists (issue #40, part 1): a list answered from the watch cache carries a
validator known before the page is built, may be kept by the browser but must be asked about
again (``Cache-Control: private, no-cache``, varying with the credentials), and a caller
holding the page as it is gets a 304 without a body. Never across callers, never for a page
that changed: a change of the list's own objects, of a related read (the events of a pod
list), of the query or of the caller's rights is a 200 with a new tag."""

import pytest

from tests.resources import kube

CONFIGMAP_RIGHTS = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]


def settled(cluster, namespace):
    """Waits for the config map the cluster puts in every new namespace (kube-root-ca.crt), so
    that no change but the test's own comes to the namespace's config maps."""
    cluster.wait_for(lambda: cluster.request(
        "GET", "/api/v1/namespaces/%s/configmaps/kube-root-ca.crt" % namespace)[0] == 200,
        what="the namespace's root CA config map")


def configmap(cluster, namespace, name, data=None):
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": name}, "data": data or {"k": "v"}})


def tagged(gateway, path, token, **params):
    """The 200 of a list answered from the cache, checked for its headers; its tag."""
    reply = gateway.get(path, token=token, params=params or None)
    assert reply.status == 200, (path, reply)
    headers = reply.headers
    assert headers["Cache-Control"] == "private, no-cache", headers
    assert "Authorization" in headers["Vary"] and "Cookie" in headers["Vary"], headers
    assert "X-Dashboard-Cache-Age" in headers, headers
    tag = headers["ETag"]
    assert tag.startswith('W/"') and tag.endswith('"'), tag
    return tag, reply


def again(gateway, path, token, tag, **params):
    return gateway.get(path, token=token, params=params or None,
                       headers={"If-None-Match": tag})


def test_an_unchanged_list_is_a_304_and_a_changed_one_a_200(
        cluster, gateway, namespace, other_namespace, admin_token, cache_caught_up):
    path = "/api/v1/configmap/" + namespace
    settled(cluster, namespace)
    configmap(cluster, namespace, "first")
    cache_caught_up("configmap")
    tag, first = tagged(gateway, path, admin_token, sortBy="a,name")
    assert "first" in kube.names(first.json(), "items")

    unchanged = again(gateway, path, admin_token, tag, sortBy="a,name")
    assert unchanged.status == 304, unchanged
    assert unchanged.data == b"" and unchanged.headers["ETag"] == tag
    assert unchanged.headers["Cache-Control"] == "private, no-cache"
    # Several tags held (two tabs): any of them; a list of others: the page.
    assert again(gateway, path, admin_token, 'W/"other", ' + tag, sortBy="a,name").status == 304
    assert again(gateway, path, admin_token, 'W/"other"', sortBy="a,name").status == 200
    # Another query is another page.
    assert again(gateway, path, admin_token, tag, sortBy="d,name").status == 200
    assert again(gateway, path, admin_token, tag, sortBy="a,name", itemsPerPage="1").status == 200

    # A change in another namespace leaves this page as it was.
    configmap(cluster, other_namespace, "elsewhere")
    cache_caught_up("configmap")
    assert again(gateway, path, admin_token, tag, sortBy="a,name").status == 304

    # A change of the page's own objects: a 200 with the change and a new tag.
    configmap(cluster, namespace, "second")
    cache_caught_up("configmap")
    changed = again(gateway, path, admin_token, tag, sortBy="a,name")
    assert changed.status == 200, changed
    assert {"first", "second"} <= set(kube.names(changed.json(), "items"))
    new_tag = changed.headers["ETag"]
    assert new_tag != tag
    assert again(gateway, path, admin_token, new_tag, sortBy="a,name").status == 304
    # An object changed in place (same names, new data) changes the page too.
    status, _ = cluster.request("PATCH", "/api/v1/namespaces/%s/configmaps/first" % namespace,
                                {"data": {"k": "changed"}})
    assert status == 200
    cache_caught_up("configmap")
    assert again(gateway, path, admin_token, new_tag, sortBy="a,name").status == 200


def test_a_related_read_that_changed_changes_the_page(cluster, gateway, namespace, admin_token,
                                                      cache_caught_up):
    """A pod list reads the namespace's events (its warnings): a new event is a new page,
    though no pod changed."""
    pod = kube.pod(cluster, namespace, "quiet", nodeName="no-such-node")
    cache_caught_up("pod", "event")
    path = "/api/v1/pod/" + namespace
    tag, _ = tagged(gateway, path, admin_token)
    assert again(gateway, path, admin_token, tag).status == 304
    kube.event(cluster, namespace, "quiet-warning", kube.involved(pod, "Pod"), "BackOff",
               "Back-off restarting failed container", type_="Warning")
    cache_caught_up("event")
    changed = again(gateway, path, admin_token, tag)
    assert changed.status == 200, changed
    assert changed.headers["ETag"] != tag
    assert changed.json()["pods"][0]["warnings"], changed.json()


def test_never_a_304_across_callers(cluster, gateway, namespace, admin_token, norights_token,
                                    cache_caught_up):
    """Another caller holding the admin's tag (a shared browser, a leaked tag) gets their own
    answer: the same page is a 200 with a tag of their own; a caller without the right a 403."""
    settled(cluster, namespace)
    configmap(cluster, namespace, "shared")
    reader = kube.grant(cluster, namespace, "reader", CONFIGMAP_RIGHTS)
    path = "/api/v1/configmap/" + namespace
    cache_caught_up("configmap")
    tag, admin_page = tagged(gateway, path, admin_token)
    theirs = again(gateway, path, reader, tag)
    assert theirs.status == 200, theirs
    assert theirs.json()["items"] == admin_page.json()["items"]
    assert theirs.headers["ETag"] != tag
    assert again(gateway, path, reader, theirs.headers["ETag"]).status == 304

    refused = again(gateway, path, norights_token, tag)
    assert refused.status == 403, refused
    assert 'User "nobody" cannot list resource "configmaps"' in refused.json()["message"]
    anonymous = gateway.get(path, headers={"If-None-Match": tag})
    assert anonymous.status == 401, anonymous
    bad = again(gateway, path, admin_token, tag, itemsPerPage="many")
    assert bad.status == 400 and "itemsPerPage" in bad.json()["message"], bad


def test_lists_not_from_the_cache_and_details_stay_no_store(gateway, namespace, admin_token):
    """Secrets are never cached: their list is read from the API server now, and nothing but
    the body itself can say whether it changed. Details are always read from the API server
    with the caller's token: neither is kept by a browser."""
    reply = gateway.get("/api/v1/secret/" + namespace, token=admin_token)
    assert reply.status == 200, reply
    assert reply.headers["Cache-Control"] == "no-store"
    assert "X-Dashboard-Cache-Age" not in reply.headers
    detail = gateway.get("/api/v1/namespace/" + namespace, token=admin_token)
    assert detail.status == 200 and detail.headers["Cache-Control"] == "no-store", detail


@pytest.mark.parametrize("header", ['"' + "x" * 190 + '", ' * 40, "*, *", 'W/"unterminated',
                                    'not a tag, W/, ""'])
def test_any_if_none_match_is_read_bounded(gateway, namespace, admin_token, header):
    """Many tags, ``*`` (any page held: a 304 once the page has a validator), and junk: an
    answer, never an error."""
    reply = gateway.get("/api/v1/configmap/" + namespace, token=admin_token,
                        headers={"If-None-Match": header})
    assert reply.status == (304 if header.startswith("*") else 200), reply

