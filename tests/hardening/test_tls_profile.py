"""TLS: Mozilla's "intermediate" profile on the served port, and a generated certificate that
strict verifiers accept (Subject and Authority Key Identifiers)."""

import socket
import ssl

import pytest
from cryptography import x509

from dashboard_api.serving import tls
from tests.support.gateway import Gateway

pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning",
    # sslyze's bundled trust store holds a root with a zero serial; not ours.
    "ignore:Parsed a serial number:cryptography.utils.CryptographyDeprecationWarning")


@pytest.fixture(scope="module")
def https(cluster, tmp_path_factory):
    cert_dir = tmp_path_factory.mktemp("certs")
    gw = Gateway.start(cluster, "--auto-generate-certificates", "--default-cert-dir",
                       str(cert_dir), https=True)
    yield gw, int(gw.url.rsplit(":", 1)[1]), str(cert_dir / tls.CERT_NAME)
    gw.stop()


def connect(port, ctx, server_hostname=None):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        with ctx.wrap_socket(sock, server_hostname=server_hostname) as conn:
            return conn.version(), conn.cipher()[0]


def client(maximum=None, ciphers=None, curve=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if maximum:
        ctx.maximum_version = maximum
    if ciphers:
        ctx.set_ciphers(ciphers)
    if curve:
        ctx.set_ecdh_curve(curve)
    return ctx


def test_the_generated_certificate_carries_key_identifiers(https):
    with open(https[2], "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    aki = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    assert aki.key_identifier == ski.digest   # self-signed: its own key


def test_a_strict_context_accepts_it(https):
    """Python 3.13's default client context: VERIFY_X509_STRICT and VERIFY_X509_PARTIAL_CHAIN,
    hostname checked, the generated certificate as the trust anchor."""
    _, port, cert = https
    ctx = ssl.create_default_context(cafile=cert)
    ctx.verify_flags |= ssl.VERIFY_X509_STRICT | ssl.VERIFY_X509_PARTIAL_CHAIN
    version, _ = connect(port, ctx, server_hostname="localhost")
    assert version == "TLSv1.3"


def test_cbc_suites_and_other_curves_are_refused(https):
    _, port, _ = https
    with pytest.raises(ssl.SSLError):
        connect(port, client(ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-SHA256:"
                                                     "ECDHE-ECDSA-AES128-SHA"))
    with pytest.raises(ssl.SSLError):
        connect(port, client(curve="secp521r1"))
    assert connect(port, client(ssl.TLSVersion.TLSv1_2)) == \
        ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384")
    assert connect(port, client(curve="prime256v1"))[0] == "TLSv1.3"


def test_sslyze_finds_the_intermediate_profile(https):
    """sslyze's own Mozilla checker against the served port; the certificate's trust aside (it
    is self-signed), every other finding fails the test."""
    from sslyze import Scanner, ServerNetworkLocation, ServerScanRequest
    from sslyze.mozilla_tls_profile.tls_config_checker import (
        SCAN_COMMANDS_NEEDED_BY_MOZILLA_CHECKER, MozillaTlsConfiguration,
        ServerNotCompliantWithTlsConfiguration, TlsConfigurationEnum,
        check_server_against_tls_configuration)

    _, port, _ = https
    scanner = Scanner()
    scanner.queue_scans([ServerScanRequest(
        server_location=ServerNetworkLocation("localhost", port, ip_address="127.0.0.1"),
        scan_commands=SCAN_COMMANDS_NEEDED_BY_MOZILLA_CHECKER)])
    [result] = list(scanner.get_results())
    profile = MozillaTlsConfiguration.get(TlsConfigurationEnum.MOZILLA_INTERMEDIATE)
    try:
        check_server_against_tls_configuration(result, profile)
        issues = {}
    except ServerNotCompliantWithTlsConfiguration as exc:
        issues = dict(exc.issues)
    issues.pop("certificate_path_validation", None)   # self-signed: no public CA trusts it
    assert issues == {}
    suites = result.scan_result.tls_1_2_cipher_suites.result.accepted_cipher_suites
    assert suites and all("GCM" in s.cipher_suite.name or "CHACHA" in s.cipher_suite.name
                          for s in suites)
    curves = {c.name for c in result.scan_result.elliptic_curves.result.supported_curves}
    assert curves and curves <= {"X25519", "prime256v1", "secp256r1", "secp384r1"}
