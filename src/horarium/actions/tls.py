"""TLS contexts: the verifying default, and one per client certificate (pfx), cached.

Python's ssl module loads a certificate and key only from files, so the pfx is written once, as
PEM with the key encrypted under a random passphrase, to a private temporary file that is
removed right after loading; that runs in a worker thread, off the event loop.
Server certificates are verified against the system trust store, which honours SSL_CERT_FILE
and SSL_CERT_DIR (the way to trust a private CA).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import os
import secrets
import ssl
import tempfile
from collections import OrderedDict

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from horarium.actions.fields import ActionInputError

MAX_CACHED = 256


def default_context() -> ssl.SSLContext:
    return ssl.create_default_context()


def context_for_pfx(pfx_base64: str, password: str | None) -> ssl.SSLContext:
    """A verifying client context that presents the pfx's certificate (blocking: file I/O)."""
    try:
        data = base64.b64decode(pfx_base64, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ActionInputError("'authentication.pfx' is not valid base64") from exc
    try:
        key, cert, chain = pkcs12.load_key_and_certificates(
            data, password.encode() if password else None
        )
    except ValueError as exc:
        raise ActionInputError(
            "'authentication.pfx' could not be opened with 'authentication.password' "
            "(wrong password or not a PKCS#12 file)"
        ) from exc
    if key is None or cert is None:
        raise ActionInputError("'authentication.pfx' must hold a certificate and its private key")
    passphrase = secrets.token_bytes(32)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(passphrase),
    ) + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *(chain or [])])
    context = default_context()
    fd, path = tempfile.mkstemp(prefix="horarium-cert-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        context.load_cert_chain(path, password=passphrase)
    finally:
        os.unlink(path)
    return context


class ClientCertificates:
    """SSL contexts per (pfx, password), built once and shared by every request using them."""

    def __init__(self) -> None:
        self._contexts: OrderedDict[bytes, asyncio.Future[ssl.SSLContext]] = OrderedDict()

    async def context(self, pfx_base64: str, password: str | None) -> ssl.SSLContext:
        key = hashlib.sha256(f"{pfx_base64}\0{password or ''}".encode()).digest()
        pending = self._contexts.get(key)
        if pending is None:
            pending = asyncio.ensure_future(
                asyncio.to_thread(context_for_pfx, pfx_base64, password)
            )
            self._contexts[key] = pending
            while len(self._contexts) > MAX_CACHED:
                self._contexts.popitem(last=False)
        else:
            self._contexts.move_to_end(key)
        try:
            return await asyncio.shield(pending)
        except Exception:
            if self._contexts.get(key) is pending:
                del self._contexts[key]
            raise
