"""Kubeconfigs read without the kubernetes package: inline certificates, relative paths, token
files re-read as they rotate, the in-cluster account, proxies, and what is left to the package
(a command giving the token)."""

import base64
import os
import stat
import sys
import textwrap

import pytest
import yaml

from dashboard_api.kubeapi import connection, kubeconfig
from dashboard_api.kubeapi.connection import ConfigError

CA, CERT, KEY = b"-----CA-----\n", b"-----CERT-----\n", b"-----KEY-----\n"


def write(path, cluster, user, name="c"):
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "clusters": [{"name": name, "cluster": cluster}],
        "users": [{"name": name, "user": user}]}))
    return str(path)


def b64(data):
    return base64.b64encode(data).decode()


def test_inline_certificates_are_private_files_and_only_the_service_pool_presents_them(tmp_path):
    path = write(tmp_path / "k", {"server": "https://127.0.0.1:1",
                                  "certificate-authority-data": b64(CA)},
                 {"client-certificate-data": b64(CERT), "client-key-data": b64(KEY)})
    conn = kubeconfig.connection(path)
    assert conn.host == "https://127.0.0.1:1" and conn.verify_ssl
    for file, content in ((conn.ssl_ca_cert, CA), (conn.cert_file, CERT), (conn.key_file, KEY)):
        with open(file, "rb") as f:
            assert f.read() == content
        assert stat.S_IMODE(os.stat(file).st_mode) == 0o600
    assert conn.authorization() is None
    # The same content is written once however often the file is read again.
    assert kubeconfig.connection(path).cert_file == conn.cert_file
    service = connection.pool(conn, 2).connection_pool_kw
    user = connection.pool(conn, 2, credentials=False).connection_pool_kw
    assert service["cert_file"] == conn.cert_file and service["key_file"] == conn.key_file
    assert "cert_file" not in user and "key_file" not in user
    assert user["ca_certs"] == conn.ssl_ca_cert and user["maxsize"] == 2


def test_relative_paths_are_relative_to_the_file_that_names_them(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    a = write(tmp_path / "one" / "k", {"server": "https://a:1", "certificate-authority": "ca.pem",
                                       "insecure-skip-tls-verify": True,
                                       "tls-server-name": "api.internal"},
              {"tokenFile": "token"}, name="a")
    (tmp_path / "one" / "token").write_text("token-a\n")
    b = write(tmp_path / "two" / "k", {"server": "https://b:1", "certificate-authority": "ca.pem"},
              {"token": "token-b", "client-certificate": "/abs/cert"}, name="b")
    merged = "%s:%s" % (a, b)
    conn_a = kubeconfig.connection(merged)   # the first file's current context
    assert conn_a.host == "https://a:1" and not conn_a.verify_ssl
    assert conn_a.ssl_ca_cert == str(tmp_path / "one" / "ca.pem")
    assert conn_a.tls_server_name == "api.internal"
    assert connection.pool(conn_a, 1).connection_pool_kw["server_hostname"] == "api.internal"
    assert conn_a.authorization() == "Bearer token-a"
    conn_b = kubeconfig.connection(merged, "b")
    assert conn_b.ssl_ca_cert == str(tmp_path / "two" / "ca.pem")
    assert conn_b.cert_file == "/abs/cert" and conn_b.authorization() == "Bearer token-b"


def test_a_token_file_is_read_again_once_a_minute_and_kept_when_unreadable(tmp_path):
    token = tmp_path / "token"
    token.write_text("first")
    now = [0.0]
    conn = connection.Connection("https://a:1", token_file=str(token), clock=lambda: now[0])
    token.write_text("second")
    now[0] = connection.TOKEN_REREAD - 1
    assert conn.authorization() == "Bearer first"
    now[0] = connection.TOKEN_REREAD
    assert conn.authorization() == "Bearer second"
    token.unlink()
    now[0] = 3 * connection.TOKEN_REREAD
    assert conn.authorization() == "Bearer second"
    assert "second" not in repr(conn)


def test_the_in_cluster_account(tmp_path, monkeypatch):
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with pytest.raises(ConfigError, match="ca.crt"):
        connection.in_cluster(directory=str(tmp_path))
    (tmp_path / "ca.crt").write_bytes(CA)
    (tmp_path / "token").write_text("pod-token\n")
    conn = connection.in_cluster(directory=str(tmp_path))
    assert conn.host == "https://[fd00::1]:443" and conn.ssl_ca_cert == str(tmp_path / "ca.crt")
    assert conn.authorization() == "Bearer pod-token" and conn.proxy is None
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    with pytest.raises(ConfigError, match="not in a pod"):
        connection.in_cluster(directory=str(tmp_path))


def test_proxies_from_the_kubeconfig_and_the_environment(tmp_path, monkeypatch):
    for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    path = write(tmp_path / "k", {"server": "https://api.example:6443"}, {"token": "t"})
    conn = kubeconfig.connection(path)
    assert conn.proxy == "http://proxy.example:3128"
    assert type(connection.pool(conn, 1)).__name__ == "ProxyManager"
    monkeypatch.setenv("NO_PROXY", ".example")
    assert kubeconfig.connection(path).proxy is None
    path = write(tmp_path / "k", {"server": "https://api.example:6443",
                                  "proxy-url": "http://own.proxy:8080"}, {"token": "t"})
    assert kubeconfig.connection(path).proxy == "http://own.proxy:8080"


@pytest.mark.parametrize("cluster, user, message", [
    ({"server": "https://a:1", "certificate-authority-data": "not base64!"}, {}, "base64"),
    ({"certificate-authority": "/ca"}, {"token": "t"}, "no cluster server"),
])
def test_unusable_kubeconfigs_say_why(tmp_path, cluster, user, message):
    with pytest.raises(ConfigError, match=message):
        kubeconfig.connection(write(tmp_path / "k", cluster, user))


def test_a_missing_context_says_which(tmp_path):
    path = write(tmp_path / "k", {"server": "https://a:1"}, {"token": "t"})
    with pytest.raises(ConfigError, match="no context other"):
        kubeconfig.connection(path, "other")


def test_a_command_giving_the_token_is_left_to_the_kubernetes_package(tmp_path):
    """An exec plugin runs as kubectl runs it (the package's loader), and its token is the
    service's header."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text(textwrap.dedent("""\
        import json
        print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1beta1",
                          "kind": "ExecCredential", "status": {"token": "from-exec"}}))
        """))
    path = write(tmp_path / "k", {"server": "https://127.0.0.1:1"},
                 {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1",
                           "command": sys.executable, "args": [str(plugin)]}})
    conn = kubeconfig.connection(path)
    assert conn.host == "https://127.0.0.1:1"
    assert conn.authorization() == "Bearer from-exec"
