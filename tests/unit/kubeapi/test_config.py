"""The service identity carries the kubeconfig's token (the client keeps it as BearerToken)."""

import argparse

from dashboard_api.kubeapi import config

KUBECONFIG = """apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: service-token}}]
"""


def load(tmp_path, proxy=False):
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    return config.load(argparse.Namespace(
        kubeconfig=str(path), apiserver_host=None, apiserver_ca_bundle=None,
        apiserver_skip_tls_verify=False, api_workers=2, proxy=proxy), kubeconfig=str(path))


def test_service_headers_carry_the_kubeconfig_token(tmp_path):
    assert load(tmp_path).service_headers() == {"Authorization": "Bearer service-token"}


def test_proxy_mode_has_no_service_identity(tmp_path):
    cfg = load(tmp_path, proxy=True)
    assert cfg.service_pool is None and cfg.service_headers() == {}
