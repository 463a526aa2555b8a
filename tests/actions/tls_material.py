"""A throwaway PKI for the HTTPS tests: CA, server certificate for 127.0.0.1, client pfx."""

from __future__ import annotations

import base64
import ipaddress
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _cert(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: str,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    server: bool = False,
) -> x509.Certificate:
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclass
class Pki:
    ca_file: Path
    server_context: ssl.SSLContext  # requires a client certificate signed by the CA
    client_pfx: str  # base64
    client_password: str
    stranger_pfx: str  # a client certificate from another CA
    client_subject: str


def make_pki(folder: Path) -> Pki:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("Horarium Test CA", ca_key, "Horarium Test CA", ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _cert("127.0.0.1", server_key, "Horarium Test CA", ca_key, server=True)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _cert("scheduler-client", client_key, "Horarium Test CA", ca_key)
    other_ca_key = ec.generate_private_key(ec.SECP256R1())
    stranger_key = ec.generate_private_key(ec.SECP256R1())
    stranger = _cert("stranger", stranger_key, "Other CA", other_ca_key)

    ca_file = folder / "ca.pem"
    ca_file.write_bytes(_pem(ca))
    (folder / "server.pem").write_bytes(_pem(server) + _key_pem(server_key))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "server.pem")
    context.load_verify_locations(cafile=ca_file)
    context.verify_mode = ssl.CERT_REQUIRED

    password = "pfx-pa55word"
    pfx = pkcs12.serialize_key_and_certificates(
        b"client",
        client_key,
        client,
        None,
        serialization.BestAvailableEncryption(password.encode()),
    )
    stranger_pfx = pkcs12.serialize_key_and_certificates(
        b"stranger", stranger_key, stranger, None, serialization.BestAvailableEncryption(b"x")
    )
    return Pki(
        ca_file=ca_file,
        server_context=context,
        client_pfx=base64.b64encode(pfx).decode(),
        client_password=password,
        stranger_pfx=base64.b64encode(stranger_pfx).decode(),
        client_subject="scheduler-client",
    )
