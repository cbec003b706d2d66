"""The serving certificate: loaded from files, or generated (ECDSA P-256) and reused on restart.

Generated files are ``dashboard.crt`` and ``dashboard.key`` in --default-cert-dir (the names the
upstream web module uses). They are reused while they parse, match each other and stay valid for
at least another day (and carry the key identifiers below); otherwise new ones replace them.

Every server context follows Mozilla's "intermediate" profile (server side TLS 5.7): TLS 1.2
with ECDHE and AEAD suites only, TLS 1.3, and the client's choice of suite. Its curves are
X25519, P-256 and P-384; Python's ssl (to 3.14) sets only one curve (``set_ecdh_curve``) and
has no call for OpenSSL's groups list, so the context offers P-256 alone, which the profile
allows, unless ``SSLContext.set_groups`` exists (then all three). OpenSSL's own default
offers X448 and P-521 too, which the profile rejects.

``cryptography`` (about 8 MiB once imported) is imported only to make or check a generated
pair: a gateway given its files, or serving plain HTTP behind a proxy, never holds it.
"""

import datetime
import ipaddress
import logging
import os
import socket
import ssl

from dashboard_api.version import PRODUCT

log = logging.getLogger("dashboard_api.tls")

CERT_NAME = "dashboard.crt"
KEY_NAME = "dashboard.key"
VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=1)
# Mozilla intermediate, TLS 1.2: ECDHE key exchange with AEAD ciphers only (no DHE, no CBC).
TLS12_CIPHERS = ":".join((
    "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"))
GROUPS = "X25519:P-256:P-384"


class TlsError(Exception):
    pass


def _resolve(path, cert_dir):
    """A given path as is; a relative one not found there, inside the cert dir (as upstream)."""
    if os.path.isabs(path) or os.path.exists(path):
        return path
    return os.path.join(cert_dir, path)


def _hosts(bind_address):
    names = {"localhost", socket.gethostname()}
    ips = {"127.0.0.1", "::1"}
    if bind_address and bind_address not in ("0.0.0.0", "::"):
        try:
            ipaddress.ip_address(bind_address)
            ips.add(bind_address)
        except ValueError:
            names.add(bind_address)
    return sorted(names), sorted(ips)


def generate(cert_path, key_path, bind_address=None, now=None):
    """Writes a new self-signed ECDSA P-256 certificate and its key (mode 0600)."""
    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import hashes, serialization  # noqa: PLC0415
    from cryptography.hazmat.primitives.asymmetric import ec  # noqa: PLC0415
    from cryptography.x509.oid import NameOID  # noqa: PLC0415
    now = now or datetime.datetime.now(datetime.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    names, ips = _hosts(bind_address)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PRODUCT),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, PRODUCT)])
    san = [x509.DNSName(n) for n in names] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder()
            .subject_name(subject).issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False,
                                         content_commitment=False, data_encipherment=False,
                                         key_agreement=False, key_cert_sign=False, crl_sign=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            # Strict verifiers (Python 3.13's default context, VERIFY_X509_STRICT) refuse a
            # certificate without them; self-signed, the authority is the subject's own key.
            .add_extension(ski, critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski),
                           critical=False)
            .sign(key, hashes.SHA256()))
    os.makedirs(os.path.dirname(cert_path) or ".", exist_ok=True)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        # The mode above applies only to a new file: a stale key file keeps its own otherwise.
        os.fchmod(f.fileno(), 0o600)
        f.write(key_pem)
    with open(cert_path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))


def reusable(cert_path, key_path, now=None):
    """True when both files exist, parse, belong together and stay valid long enough."""
    from cryptography import x509  # noqa: PLC0415
    from cryptography.hazmat.primitives import serialization  # noqa: PLC0415
    now = now or datetime.datetime.now(datetime.timezone.utc)
    try:
        with open(cert_path, "rb") as f:
            cert = x509.load_pem_x509_certificate(f.read())
        with open(key_path, "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
    except (OSError, ValueError, TypeError):
        return False
    same = cert.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) == \
        key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return same and cert.not_valid_after_utc - now > RENEW_BEFORE \
        and cert.not_valid_before_utc <= now and _has_key_identifiers(cert)


def _has_key_identifiers(cert):
    """Certificates generated before the key identifiers were added are replaced."""
    from cryptography import x509  # noqa: PLC0415
    try:
        cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier)
    except x509.ExtensionNotFound:
        return False
    return True


def server_context(cert_path, key_path):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(TLS12_CIPHERS)   # TLS 1.3's suites (all AEAD) are OpenSSL's defaults
    ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE   # the profile lets the client choose
    set_groups = getattr(ctx, "set_groups", None)
    if set_groups is not None:
        set_groups(GROUPS)
    else:
        ctx.set_ecdh_curve("prime256v1")
    try:
        ctx.load_cert_chain(cert_path, key_path)
    except (OSError, ssl.SSLError) as exc:
        raise TlsError("cannot load the certificate %s and key %s: %s"
                       % (cert_path, key_path, exc)) from exc
    return ctx


def certificate_files(options):
    """(cert, key) paths to serve with, or None for plain HTTP only.

    Explicit --tls-cert-file/--tls-key-file win; else --auto-generate-certificates makes (or
    reuses) a pair in --default-cert-dir.
    """
    cert_dir = options.default_cert_dir
    if options.tls_cert_file or options.tls_key_file:
        if not (options.tls_cert_file and options.tls_key_file):
            raise TlsError("give both --tls-cert-file and --tls-key-file")
        return (_resolve(options.tls_cert_file, cert_dir),
                _resolve(options.tls_key_file, cert_dir))
    if not options.auto_generate_certificates:
        return None
    cert_path, key_path = os.path.join(cert_dir, CERT_NAME), os.path.join(cert_dir, KEY_NAME)
    if reusable(cert_path, key_path):
        log.info("reusing the generated certificate in %s", cert_dir)
    else:
        try:
            generate(cert_path, key_path, options.bind_address)
        except OSError as exc:
            raise TlsError("cannot write a certificate into %s: %s" % (cert_dir, exc.strerror))
        log.info("generated an ECDSA P-256 certificate in %s", cert_dir)
    return cert_path, key_path
