"""Http and Https actions: one attempt of `request` on the shared aiohttp session.

2xx is success; any other status, a timeout, a connection or TLS error is a failure. Outbound
authentication: Basic (Authorization header), ClientCertificate (the pfx presented in the TLS
handshake), ActiveDirectoryOAuth (a bearer token from the token cache).
"""

from __future__ import annotations

import base64
import errno
import os
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from horarium.actions.base import ActionResult, ExecutionContext
from horarium.actions.execution import execution_headers
from horarium.actions.fields import ActionInputError, lookup, section, string_map, text
from horarium.actions.http_history import BODY_CHARS, failure_message, response_message
from horarium.actions.oauth import TokenCache, TokenError
from horarium.actions.tls import ClientCertificates
from horarium.model.actions import FRAMING_RULE, is_framing_header

READ_LIMIT = BODY_CHARS * 4  # bytes: enough for 1024 characters of UTF-8
DEFAULT_CONTENT_TYPE = "text/plain; charset=utf-8"  # what .NET's StringContent sends


class HttpActions:
    def __init__(
        self,
        session: aiohttp.ClientSession,
        timeout: float,
        certificates: ClientCertificates,
        tokens: TokenCache,
    ) -> None:
        self._session = session
        self._timeout = timeout
        self._client_timeout = aiohttp.ClientTimeout(total=timeout)  # one, shared by requests
        self._certificates = certificates
        self._tokens = tokens

    async def run(self, action: Mapping[str, Any], context: ExecutionContext) -> ActionResult:
        request = section(action, "request", "action")
        url = _target(text(request, "uri", "request") or "")
        method = (text(request, "method", "request") or "").upper()
        if not method.isalpha():
            raise ActionInputError("'request.method' must be an HTTP method such as GET or POST")
        headers: CIMultiDict[str] = CIMultiDict(string_map(request, "headers", "request"))
        headers.popall("Content-Length", None)
        framing = next((name for name in headers if is_framing_header(name)), None)
        if framing is not None:  # stored before the API refused such headers: never sent
            raise ActionInputError(f"'request.headers.{framing}': {FRAMING_RULE}")
        body = text(request, "body", "request", required=False)
        data = body.encode() if body is not None else None
        if data is not None and "Content-Type" not in headers:
            headers["Content-Type"] = DEFAULT_CONTENT_TYPE
        host = url.host or ""

        ssl_context: ssl.SSLContext | None = None
        auth = lookup(request, "authentication")
        if auth is not None:
            if not isinstance(auth, Mapping):
                raise ActionInputError("'request.authentication' must be an object")
            try:
                ssl_context = await self._authenticate(auth, headers)
            except TokenError as exc:
                return ActionResult(False, failure_message(host, f"OAuth token: {exc}"))
        headers.update(execution_headers(context))

        try:
            async with self._session.request(
                method,
                url,
                headers=headers,
                data=data,
                ssl=ssl_context if ssl_context is not None else True,
                timeout=self._client_timeout,
            ) as response:
                raw = await _read_capped(response.content, READ_LIMIT)
                charset = response.charset or "utf-8"
                status = response.status
                response_headers = list(response.headers.items())
        except TimeoutError:
            return ActionResult(
                False, failure_message(host, f"no response within {self._timeout:g} seconds")
            )
        except aiohttp.ClientError as exc:
            reason = _describe(exc)
            if url.scheme == "https" and isinstance(exc, aiohttp.ServerDisconnectedError):
                # A TLS 1.3 server refuses a client certificate after the handshake, by closing.
                reason += " (a TLS server does this when it refuses the client certificate)"
            return ActionResult(False, failure_message(host, reason))
        except ssl.SSLError as exc:
            return ActionResult(False, failure_message(host, f"TLS error: {exc}"))
        try:
            body_text = raw.decode(charset, errors="replace")
        except LookupError:
            body_text = raw.decode("utf-8", errors="replace")
        message = response_message(host, status, response_headers, body_text)
        return ActionResult(200 <= status < 300, message)

    async def _authenticate(
        self, auth: Mapping[str, Any], headers: CIMultiDict[str]
    ) -> ssl.SSLContext | None:
        """Apply outbound authentication; returns the client-certificate context, if any."""
        where = "request.authentication"
        kind = (text(auth, "type", where, required=False) or "NotSpecified").lower()
        if kind == "basic":
            username = text(auth, "username", where)
            password = text(auth, "password", where, required=False) or ""
            if ":" in (username or ""):
                raise ActionInputError(f"'{where}.username' must not contain ':'")
            pair = f"{username}:{password}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
            return None
        if kind == "clientcertificate":
            pfx = text(auth, "pfx", where) or ""
            pfx_password = text(auth, "password", where, required=False)
            return await self._certificates.context(pfx, pfx_password)
        if kind == "activedirectoryoauth":
            token = await self._tokens.token(
                text(auth, "tenant", where) or "",
                text(auth, "audience", where) or "",
                text(auth, "clientId", where) or "",
                text(auth, "secret", where) or "",
            )
            headers["Authorization"] = f"Bearer {token}"
            return None
        if kind == "notspecified":
            return None
        raise ActionInputError(
            f"'{where}.type' must be Basic, ClientCertificate or ActiveDirectoryOAuth"
        )


def _target(uri: str) -> URL:
    try:
        url = URL(uri)
    except ValueError as exc:
        raise ActionInputError(f"'request.uri' is not a valid URL: {exc}") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ActionInputError("'request.uri' must be an absolute http:// or https:// URL")
    return url


async def _read_capped(stream: aiohttp.StreamReader, limit: int) -> bytes:
    """Up to `limit` bytes of the body; the rest is never read (the connection is dropped)."""
    first = await stream.read(limit)
    if stream.at_eof() or not first:  # the common case: a short body, read at once
        return first
    chunks = [first]
    size = len(first)
    while size < limit:
        chunk = await stream.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _describe(exc: aiohttp.ClientError) -> str:
    """A short, stable reason for a request that got no response."""
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return f"TLS error: the server certificate was not accepted ({exc.certificate_error})"
    if isinstance(exc, aiohttp.ClientConnectorSSLError | aiohttp.ClientSSLError):
        return f"TLS error: {exc}"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return f"the host name could not be resolved ({exc.os_error})"
    if isinstance(exc, aiohttp.ClientConnectorError):
        code = exc.os_error.errno
        reason = os.strerror(code) if code else str(exc.os_error)
        if code == errno.ECONNREFUSED:
            reason = "connection refused"
        return f"could not connect to {exc.host}:{exc.port}: {reason}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection without a response"
    if isinstance(exc, aiohttp.InvalidURL):
        return f"invalid URL: {exc}"
    cause = exc.__cause__ or exc.__context__
    if isinstance(cause, ssl.SSLError):
        return f"TLS error: {cause}"
    return f"{type(exc).__name__}: {exc}"
