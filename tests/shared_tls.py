"""One default TLS context per trust setting for the httpx clients of a test process.

httpx builds a new `ssl.SSLContext` for every client (`httpx.Client()`, `httpx.get(…)`), and its
default one loads a whole CA bundle (certifi's, or `SSL_CERT_FILE` / `SSL_CERT_DIR`): tens of
milliseconds of CPU each time, for clients that mostly speak plain HTTP to 127.0.0.1. `install`
makes the default case (`verify=True`, no client certificate) share one context per value of
those two variables and of the file's modification, built as httpx builds it; every other case
is built as httpx builds it each time. Installed once per process by tests/conftest.py.
"""

from __future__ import annotations

import functools
import os
import ssl
from typing import Any

from httpx._transports import default as transports

_build = transports.create_ssl_context


@functools.lru_cache(maxsize=32)
def _shared(trust_env: bool, where: tuple[Any, ...]) -> ssl.SSLContext:
    return _build(trust_env=trust_env)


def _trusted() -> tuple[Any, ...]:
    """What httpx's default context trusts: the variables and their file's or folder's state."""
    where: list[Any] = []
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        path = os.environ.get(name)
        try:
            stat = os.stat(path) if path else None
        except OSError:
            stat = None
        where.append((path, stat and (stat.st_mtime_ns, stat.st_size)))
    return tuple(where)


def _context(
    verify: ssl.SSLContext | str | bool = True, cert: Any = None, trust_env: bool = True
) -> ssl.SSLContext:
    if verify is True and cert is None:
        return _shared(trust_env, _trusted() if trust_env else ())
    return _build(verify=verify, cert=cert, trust_env=trust_env)


def install() -> None:
    transports.create_ssl_context = _context
