"""Serving certificates: generation (ECDSA P-256), reuse on restart, renewal, TLS floor."""

import argparse
import datetime
import os
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from dashboard_api.serving import tls


def opts(tmp_path, **kw):
    base = dict(default_cert_dir=str(tmp_path / "certs"), tls_cert_file=None, tls_key_file=None,
                auto_generate_certificates=False, bind_address="127.0.0.1")
    base.update(kw)
    return argparse.Namespace(**base)


def load(path):
    with open(path, "rb") as f:
        return x509.load_pem_x509_certificate(f.read())


def test_no_certificate_means_plain_http(tmp_path):
    assert tls.certificate_files(opts(tmp_path)) is None


def test_generated_certificate_is_p256_and_reused(tmp_path):
    o = opts(tmp_path, auto_generate_certificates=True)
    cert_path, key_path = tls.certificate_files(o)
    cert = load(cert_path)
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert cert.public_key().curve.name == "secp256r1"
    assert os.stat(key_path).st_mode & 0o777 == 0o600
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    first = cert.serial_number
    tls.certificate_files(o)
    assert load(cert_path).serial_number == first  # reused on restart


def test_a_replaced_key_file_is_made_private(tmp_path):
    o = opts(tmp_path, auto_generate_certificates=True)
    key_path = tmp_path / "certs" / tls.KEY_NAME
    key_path.parent.mkdir()
    key_path.write_text("stale")
    os.chmod(key_path, 0o644)
    tls.certificate_files(o)
    assert os.stat(key_path).st_mode & 0o777 == 0o600
    assert "PRIVATE KEY" in key_path.read_text()


def test_expiring_or_mismatched_pairs_are_replaced(tmp_path):
    o = opts(tmp_path, auto_generate_certificates=True)
    cert_path, key_path = tls.certificate_files(o)
    old = datetime.datetime.now(datetime.timezone.utc) - tls.VALIDITY + datetime.timedelta(hours=1)
    tls.generate(cert_path, key_path, now=old)
    assert not tls.reusable(cert_path, key_path)
    stale = load(cert_path).serial_number
    tls.certificate_files(o)
    assert load(cert_path).serial_number != stale and tls.reusable(cert_path, key_path)
    other = tmp_path / "other"
    tls.generate(str(other / "c"), str(other / "k"))
    os.replace(other / "k", key_path)
    assert not tls.reusable(cert_path, key_path)


def test_explicit_files_win_and_relative_names_are_found_in_the_cert_dir(tmp_path):
    o = opts(tmp_path, auto_generate_certificates=True)
    tls.certificate_files(o)
    named = opts(tmp_path, tls_cert_file="dashboard.crt", tls_key_file="dashboard.key",
                 auto_generate_certificates=True)
    assert tls.certificate_files(named) == (os.path.join(o.default_cert_dir, "dashboard.crt"),
                                            os.path.join(o.default_cert_dir, "dashboard.key"))
    with pytest.raises(tls.TlsError, match="both"):
        tls.certificate_files(opts(tmp_path, tls_cert_file="x.crt"))


def test_server_context_floor_is_tls_1_2(tmp_path):
    cert_path, key_path = tls.certificate_files(opts(tmp_path, auto_generate_certificates=True))
    ctx = tls.server_context(cert_path, key_path)
    assert ctx.minimum_version == ssl.TLSVersion.TLSv1_2
    with pytest.raises(tls.TlsError, match="cannot load"):
        tls.server_context(str(tmp_path / "nope.crt"), key_path)
