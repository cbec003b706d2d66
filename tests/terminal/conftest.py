"""Fixtures of the terminal tests: pods whose images have bash, only sh, or no shell at all."""

import pytest


# pod name -> image; the node simulator gives an image its shells by name.
PODS = {"web": "nginx:1.19", "box": "busybox:1.32", "bare": "gcr.io/distroless/static:nonroot"}
CONTAINER = "main"


def create_pods(cluster, namespace, pods):
    for name, image in pods.items():
        status, body = cluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", {
            "metadata": {"name": name},
            "spec": {"automountServiceAccountToken": False,
                     "containers": [{"name": CONTAINER, "image": image}]}})
        assert status == 201, f"creating pod {name}: {status} {body}"

    def running():
        return all(cluster.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}")[1]
                   .get("status", {}).get("phase") == "Running" for name in pods)

    cluster.wait_for(running, timeout=60, what=f"pods {list(pods)} running")


@pytest.fixture(scope="session")
def shell_pods(cluster):
    """A namespace holding the pods of PODS, all Running."""
    namespace = cluster.new_namespace("term")
    create_pods(cluster, namespace, PODS)
    yield namespace
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")
