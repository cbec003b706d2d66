"""Start-up: the version check, fatal configuration errors, clean stop."""

import base64
import subprocess
import sys

from dashboard_api.serving import tls
from tests.cluster.procs import free_ports
from tests.support.gateway import ROOT, Gateway


def run_gateway(*args, timeout=60):
    """Runs the gateway expecting it to exit on its own; returns (exit code, output)."""
    argv = [sys.executable, "-m", "dashboard_api", "--insecure-bind-address", "127.0.0.1",
            "--insecure-port", str(free_ports(1)[0])] + list(args)
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def test_unreachable_api_server_is_fatal_with_a_clear_message(cluster):
    url = "https://127.0.0.1:%d" % free_ports(1)[0]
    code, output = run_gateway("--apiserver-host", url, "--apiserver-ca-bundle", cluster.ca_file)
    assert code != 0
    assert "cannot reach the API server at %s" % url in output
    assert "Check --apiserver-host, --kubeconfig or the in-cluster configuration" in output
    assert "Traceback" not in output


def test_wrong_ca_is_fatal(cluster, tmp_path):
    other_ca = tmp_path / "ca.pem"
    tls.generate(str(other_ca), str(tmp_path / "ca.key"))
    code, output = run_gateway("--apiserver-host", cluster.url, "--apiserver-ca-bundle",
                               str(other_ca))
    assert code != 0 and "cannot reach the API server" in output


def test_missing_kubeconfig_and_in_cluster_config_are_fatal(tmp_path):
    code, output = run_gateway("--kubeconfig", str(tmp_path / "missing"))
    assert code != 0 and "cannot load cluster configuration" in output
    code, output = run_gateway()
    assert code != 0 and "in-cluster" in output


def test_bad_csrf_key_is_fatal(cluster):
    base = ["--apiserver-host", cluster.url, "--apiserver-ca-bundle", cluster.ca_file,
            "--kubeconfig", cluster.kubeconfig]
    code, output = run_gateway(*base, "--csrf-key", "not base64!")
    assert code != 0 and "CSRF key is not valid base64" in output
    short = base64.b64encode(b"short").decode()
    code, output = run_gateway(*base, "--csrf-key", short)
    assert code != 0 and "at least 32 bytes" in output


def test_nothing_to_serve_is_fatal(cluster):
    argv = [sys.executable, "-m", "dashboard_api", "--apiserver-host", cluster.url,
            "--apiserver-ca-bundle", cluster.ca_file, "--kubeconfig", cluster.kubeconfig]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "nothing to serve on" in done.stdout + done.stderr


def test_proxy_mode_starts_without_an_identity_and_stops_cleanly(cluster, admin_token):
    gw = Gateway.start(cluster, "--proxy", kubeconfig=False)
    try:
        assert gw.get("/api/v1/me", token=admin_token).status == 200
        assert gw.get("/api/v1/me").status == 401
    finally:
        gw.stop()
    assert gw.proc.returncode == 0
    assert "stopping" in open(gw.log_path).read()


def test_unreachable_api_server_is_fatal_in_proxy_mode_too(cluster):
    code, output = run_gateway("--proxy", "--apiserver-host",
                               "https://127.0.0.1:%d" % free_ports(1)[0])
    assert code != 0 and "cannot reach the API server" in output


def test_unusable_oidc_flags_are_fatal(cluster):
    base = ["--apiserver-host", cluster.url, "--apiserver-ca-bundle", cluster.ca_file,
            "--kubeconfig", cluster.kubeconfig, "--oidc-issuer-url", "https://idp.example.com"]
    code, output = run_gateway(*base)
    assert code != 0 and "--oidc-issuer-url needs --oidc-client-id" in output
    code, output = run_gateway(*base, "--oidc-client-id", "dashboard", "--oidc-redirect-url",
                               "https://dash.example.com/oidc/callback",
                               "--oidc-signing-algs", "HS256")
    assert code != 0 and "--oidc-signing-algs: 'HS256' is not allowed" in output
    assert "Traceback" not in output
