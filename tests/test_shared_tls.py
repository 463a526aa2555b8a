"""The test processes' shared TLS context (tests/shared_tls.py) trusts what httpx's own default
context trusts, follows `SSL_CERT_FILE`, and is shared only in the default case."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest

from tests import shared_tls
from tests.actions.tls_material import make_pki


def _context_of(client: httpx.Client) -> ssl.SSLContext:
    context: ssl.SSLContext = client._transport._pool._ssl_context  # type: ignore[attr-defined]
    return context


def _subjects(context: ssl.SSLContext) -> list[object]:
    return sorted(str(ca["subject"]) for ca in context.get_ca_certs())


def test_default_clients_share_one_context_that_trusts_what_httpx_trusts() -> None:
    with httpx.Client() as first, httpx.Client() as second:
        shared = _context_of(first)
        assert _context_of(second) is shared
    own = shared_tls._build()  # httpx's own default, built afresh
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert _subjects(shared) == _subjects(own)


def test_another_ca_file_gets_a_context_that_trusts_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pki = make_pki(tmp_path)
    with httpx.Client() as plain:
        shared = _context_of(plain)
    monkeypatch.setenv("SSL_CERT_FILE", str(pki.ca_file))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with httpx.Client() as trusting:
        context = _context_of(trusting)
    assert context is not shared
    assert _subjects(context) == _subjects(ssl.create_default_context(cafile=pki.ca_file))
    with httpx.Client(verify=False) as unchecked:
        assert _context_of(unchecked).verify_mode == ssl.CERT_NONE
