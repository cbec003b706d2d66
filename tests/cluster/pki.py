"""Throw-away PKI for the local cluster: one CA, the certificates the control plane
needs and the service-account signing key pair, written as PEM files.

ECDSA P-256 everywhere: key generation is near-instant, which keeps cluster start fast,
and every component of Kubernetes 1.20 accepts it.
"""
import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Names a client may use to reach the apiserver: loopback, and the in-cluster names
# and service IP that service-account clients (and the root CA config map) expect.
APISERVER_DNS_NAMES = [
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
]
APISERVER_IPS = ["127.0.0.1", "10.96.0.1"]

VALIDITY = datetime.timedelta(days=2)


class Pki:
    """Paths of the PEM files written by `create`."""

    def __init__(self, directory):
        self.dir = directory
        self.ca_cert = os.path.join(directory, "ca.crt")
        self.ca_key = os.path.join(directory, "ca.key")
        self.apiserver_cert = os.path.join(directory, "apiserver.crt")
        self.apiserver_key = os.path.join(directory, "apiserver.key")
        self.kubelet_client_cert = os.path.join(directory, "kubelet-client.crt")
        self.kubelet_client_key = os.path.join(directory, "kubelet-client.key")
        self.sa_private_key = os.path.join(directory, "sa.key")
        self.sa_public_key = os.path.join(directory, "sa.pub")


def _new_key():
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name, organization=None):
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attrs)


def _builder(subject, issuer, public_key):
    now = datetime.datetime.now(datetime.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        # Backdated a little so small clock differences never make it "not yet valid".
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


def _write_key(path, key):
    data = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _write_cert(path, cert):
    with open(path, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))


def _key_usage(signs_certificates):
    """Digital signatures (ECDSA), plus certificate and CRL signing for the CA."""
    return x509.KeyUsage(
        digital_signature=True, key_encipherment=False, content_commitment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=signs_certificates,
        crl_sign=signs_certificates, encipher_only=False, decipher_only=False)


def _key_ids(builder, public_key, issuer_public_key):
    """Subject and authority key identifiers: strict verifiers (Python 3.13's default context,
    VERIFY_X509_STRICT) refuse a chain without them."""
    return (builder
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_public_key),
                           critical=False))


def _issue(ca_key, ca_cert, subject, usages, san=None):
    key = _new_key()
    builder = (
        _key_ids(_builder(subject, ca_cert.subject, key.public_key()),
                 key.public_key(), ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            _key_usage(signs_certificates=False),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    )
    if san:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def create(directory):
    """Generate a fresh CA and every certificate/key the cluster needs into `directory`."""
    os.makedirs(directory, exist_ok=True)
    pki = Pki(directory)

    ca_key = _new_key()
    ca_subject = _name("dashboard-test-ca")
    ca_cert = (
        _key_ids(_builder(ca_subject, ca_subject, ca_key.public_key()),
                 ca_key.public_key(), ca_key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            _key_usage(signs_certificates=True),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    _write_key(pki.ca_key, ca_key)
    _write_cert(pki.ca_cert, ca_cert)

    san = [x509.DNSName(n) for n in APISERVER_DNS_NAMES]
    san += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in APISERVER_IPS]
    key, cert = _issue(ca_key, ca_cert, _name("kube-apiserver"),
                       [ExtendedKeyUsageOID.SERVER_AUTH], san)
    _write_key(pki.apiserver_key, key)
    _write_cert(pki.apiserver_cert, cert)

    # The identity the apiserver presents to kubelets (logs, exec).
    key, cert = _issue(ca_key, ca_cert,
                       _name("kube-apiserver-kubelet-client", "system:masters"),
                       [ExtendedKeyUsageOID.CLIENT_AUTH])
    _write_key(pki.kubelet_client_key, key)
    _write_cert(pki.kubelet_client_cert, cert)

    sa_key = _new_key()
    _write_key(pki.sa_private_key, sa_key)
    with open(pki.sa_public_key, "wb") as f:
        f.write(sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return pki
