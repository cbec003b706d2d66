"""The unchanged upstream web UI's search box takes the query language (issue #38): headless
chromium loads a page that searches the way the upstream search page does (tests/webui/page/
search.html: every kind's list with filterBy=name,<query>, encoded as Angular encodes it, one
card per kind) from the gateway's --web-root; given ``label:app=...`` every card shows exactly
the objects of its kind carrying that label, from the watch cache (and secrets through the
API server), in every namespace or in one."""

import secrets

from tests.resources import kube


def test_the_search_page_shows_exactly_the_labelled_objects_of_every_kind(
        cluster, ui_gateway, page, namespace, admin_token, cluster_objects):
    app = "srch-" + secrets.token_hex(3)
    mark = {"app": app}
    kube.pod(cluster, namespace, "lone", labels=mark)
    kube.apps(cluster, namespace, "deployments", "front", mark)
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "front-config", "labels": mark}})
    kube.create(cluster, "/api/v1/namespaces/%s/secrets" % namespace,
                {"metadata": {"name": "front-secret", "labels": mark},
                 "stringData": {"k": "v"}})
    kube.create(cluster, "/api/v1/namespaces/%s/services" % namespace,
                {"metadata": {"name": "front", "labels": mark},
                 "spec": {"selector": mark, "ports": [{"port": 80}]}})
    kube.create(cluster, "/api/v1/namespaces/%s/configmaps" % namespace,
                {"metadata": {"name": "unlabelled", "labels": {"app": app + "-not"}}})
    volume = "pv-" + app
    kube.create(cluster, "/api/v1/persistentvolumes", {
        "metadata": {"name": volume, "labels": mark},
        "spec": {"capacity": {"storage": "1Mi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/" + volume}}})
    cluster_objects.append("/api/v1/persistentvolumes/" + volume)
    kube.wait_pods(cluster, namespace, "app=" + app, 2)

    page.goto(ui_gateway.url + "/search.html")

    def search(query, ns=""):
        return page.evaluate("([q, ns, token]) => searchpage.load(q, ns, token)",
                             [query, ns, admin_token])

    def until(query, ns, want):
        """The cache follows the API server: asked again until the new pod shows."""
        found = None
        for _ in range(100):
            found = search(query, ns)
            if len(found["pod"]) == want:
                return found
            page.wait_for_timeout(100)
        return found

    found = until("label:app=" + app, "", 2)
    pods = sorted(found.pop("pod"))
    assert pods[0].startswith("front-") and pods[1] == "lone"
    replica_sets = found.pop("replicaset")
    assert len(replica_sets) == 1 and replica_sets[0].startswith("front-")
    assert found == {"clusterrole": [], "namespace": [], "node": [],
                     "persistentvolume": [volume], "storageclass": [], "cronjob": [],
                     "daemonset": [], "deployment": ["front"], "job": [],
                     "replicationcontroller": [], "statefulset": [], "ingress": [],
                     "service": ["front"], "configmap": ["front-config"],
                     "persistentvolumeclaim": [], "secret": ["front-secret"],
                     "serviceaccount": [], "role": []}
    # the cards show it
    assert page.text_content("#card-configmap li") == "front-config"
    assert page.text_content("#card-job ul") == "There is nothing to display here"
    assert page.text_content("#card-pod h2") == "pod (2)"

    # in the namespace of the URL, with more terms: the same objects, narrower
    found = search("front label:app=" + app + " kind:deployment|configmap", namespace)
    assert {k: v for k, v in found.items() if v} == {"deployment": ["front"],
                                                     "configmap": ["front-config"]}
    found = search("label:app!=" + app + " label:app", namespace)
    assert {k: v for k, v in found.items() if v} == {"configmap": ["unlabelled"]}

    # a malformed query: every card's list answers the 400 naming the term
    reply = page.evaluate("""async ([token]) => {
        const r = await fetch('api/v1/pod?filterBy=name,' + encodeURIComponent('app:web'),
                              {headers: {Authorization: 'Bearer ' + token}});
        return [r.status, (await r.json()).message];
    }""", [admin_token])
    assert reply[0] == 400 and "'app:web'" in reply[1]
