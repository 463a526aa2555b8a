"""ClientCertificate authentication: what GET shows instead of the pfx, read from the pfx."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.serialization import pkcs12

from horarium.model.errors import BadRequest


@dataclass(frozen=True)
class CertificateFacts:
    thumbprint: str  # SHA-1 of the DER certificate, upper-case hex (as Windows shows it)
    expiration: datetime  # notAfter, aware UTC
    subject_name: str  # "CN=…, O=…" in the order .NET's X509Certificate2.Subject uses


def read_pfx(pfx: str, password: str | None, path: str) -> CertificateFacts:
    """Open a base64 PKCS#12 blob with its password; a 400 naming `path` when that fails."""
    try:
        blob = base64.b64decode(pfx, validate=True)
    except (binascii.Error, ValueError) as e:
        raise BadRequest(f"{path}.pfx: must be the base64 text of a PKCS#12 (.pfx) file") from e
    secret = password.encode() if password else None
    try:
        key, cert, _extra = pkcs12.load_key_and_certificates(blob, secret)
    except (ValueError, TypeError) as e:
        raise BadRequest(f"{path}.pfx: could not be opened with the given password ({e})") from e
    if cert is None or key is None:
        raise BadRequest(f"{path}.pfx: must contain a certificate and its private key")
    subject = ", ".join(
        attribute.rfc4514_string() for rdn in reversed(cert.subject.rdns) for attribute in rdn
    )
    return CertificateFacts(
        thumbprint=cert.fingerprint(hashes.SHA1()).hex().upper(),
        expiration=cert.not_valid_after_utc,
        subject_name=subject,
    )
