"""HTTPS: generated ECDSA P-256 certificate, reused on restart, TLS 1.2 minimum."""

import socket
import ssl
import threading

import pytest
import urllib3
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from dashboard_api.serving import tls
from tests.cluster.procs import free_ports

# The test clients talk TLS 1.1 on purpose and do not verify the self-signed certificate.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning",
                                        "ignore::urllib3.exceptions.InsecureRequestWarning")


def port_of(gw):
    return int(gw.url.rsplit(":", 1)[1])


def handshake(port, version):
    """The negotiated version, or the SSL error, of a client offering only ``version``."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")  # let this client speak TLS 1.1 at all
    ctx.minimum_version = ctx.maximum_version = version
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            with ctx.wrap_socket(sock) as conn:
                return conn.version()
        except ssl.SSLError as exc:
            return exc


def lenient_server(cert, key):
    """A control server that does accept TLS 1.1, proving the client above can speak it."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    ctx.minimum_version = ssl.TLSVersion.TLSv1_1
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        try:
            ctx.wrap_socket(conn, server_side=True).close()
        except (ssl.SSLError, OSError):
            conn.close()
        listener.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener.getsockname()[1], thread


def served_certificate(port):
    pem = ssl.get_server_certificate(("127.0.0.1", port))
    return x509.load_pem_x509_certificate(pem.encode())


def test_generated_certificate_refuses_tls_1_1_and_accepts_1_2(start_gateway, tmp_path):
    cert_dir = tmp_path / "certs"
    gw = start_gateway("--auto-generate-certificates", "--default-cert-dir", str(cert_dir),
                       https=True)
    assert gw.url.startswith("https://")
    reply = gw.get("/config")
    assert reply.status == 200 and "serverTime" in reply.json()
    port = port_of(gw)

    refused = handshake(port, ssl.TLSVersion.TLSv1_1)
    assert isinstance(refused, ssl.SSLError), refused
    assert handshake(port, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    assert handshake(port, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"

    control_port, thread = lenient_server(str(cert_dir / "dashboard.crt"),
                                          str(cert_dir / "dashboard.key"))
    assert handshake(control_port, ssl.TLSVersion.TLSv1_1) == "TLSv1.1"
    thread.join(10)

    cert = served_certificate(port)
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert cert.public_key().curve.name == "secp256r1"


def test_generated_certificate_is_reused_on_restart(start_gateway, tmp_path):
    cert_dir = str(tmp_path / "certs")
    first = start_gateway("--auto-generate-certificates", "--default-cert-dir", cert_dir,
                          https=True)
    serial = served_certificate(port_of(first)).serial_number
    first.stop()
    second = start_gateway("--auto-generate-certificates", "--default-cert-dir", cert_dir,
                           https=True)
    assert served_certificate(port_of(second)).serial_number == serial


def test_given_certificate_files_and_http_beside_https(start_gateway, tmp_path):
    cert, key = str(tmp_path / "my.crt"), str(tmp_path / "my.key")
    tls.generate(cert, key)
    [http_port] = free_ports(1)
    gw = start_gateway("--tls-cert-file", cert, "--tls-key-file", key,
                       "--insecure-bind-address", "127.0.0.1", "--insecure-port", str(http_port),
                       https=True)
    with open(cert, "rb") as f:
        expected = x509.load_pem_x509_certificate(f.read()).serial_number
    assert served_certificate(port_of(gw)).serial_number == expected
    plain = urllib3.PoolManager(retries=False).request(
        "GET", "http://127.0.0.1:%d/api/v1/systembanner" % http_port)
    assert plain.status == 200
