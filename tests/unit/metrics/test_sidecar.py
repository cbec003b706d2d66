"""--sidecar-token-file on the gateway's side: the token goes with every call to the sidecar."""

from types import SimpleNamespace

import pytest

from dashboard_api.kubeapi.client import Cluster, Response
from dashboard_api.metrics import sidecar as sidecar_mod


class Recorder:
    async def run(self, fn, pool, method, url, headers, body, deadline, stream, decode):
        self.seen = (method, url, headers)
        return Response(200, {}, b"{}")


@pytest.mark.gen_test(timeout=5)
async def test_through_the_service_proxy_the_token_has_a_header_of_its_own():
    cluster = Cluster.__new__(Cluster)
    cluster.config = SimpleNamespace(
        host="https://api", service_pool=object(), user_pool=object(),
        service_headers=lambda: {"Authorization": "Bearer service-identity"})
    cluster.executor = Recorder()
    cluster.buckets = SimpleNamespace(for_caller=lambda token: None)
    cluster.timeout = 5
    cluster.connect_timeout = 2
    client = sidecar_mod.SidecarClient(cluster, namespace="ns", service="side", token="s3cret")
    assert await client.get("/healthz") == (200, b"{}")
    method, url, headers = cluster.executor.seen
    assert url == "https://api/api/v1/namespaces/ns/services/side/proxy/healthz"
    assert headers["Authorization"] == "Bearer service-identity"  # the API server's
    assert headers[sidecar_mod.TOKEN_HEADER] == "s3cret"  # the sidecar's


def test_the_token_file_is_read_and_checked(tmp_path):
    path = tmp_path / "token"
    path.write_text("  abc \n")
    assert sidecar_mod.read_token(str(path)) == "abc"
    path.write_text("\n")
    with pytest.raises(OSError, match="empty"):
        sidecar_mod.read_token(str(path))
    with pytest.raises(OSError, match="--sidecar-token-file"):
        sidecar_mod.read_token(str(tmp_path / "missing"))
