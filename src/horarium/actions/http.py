"""Http and Https actions: one attempt of `request` on the shared aiohttp session.

2xx is success; any other status, a timeout, a connection or TLS error is a failure. Outbound
authentication: Basic (Authorization header), ClientCertificate (the pfx presented in the TLS
handshake), ActiveDirectoryOAuth (a bearer token from the token cache).

Redirects (301, 302, 303, 307, 308) are followed here, up to MAX_REDIRECTS, each hop a request of
its own through the session, so the outbound policy judges every hop. 303, and 301/302 after a
POST, continue as a GET without the body; 307/308 keep the method and body. An https URL is not
redirected to http. When a hop leaves the origin (scheme, host, port), the credentials stay
behind: credential-like headers and the client certificate.
"""

from __future__ import annotations

import base64
import errno
import os
import ssl
import time
from collections.abc import Mapping
from typing import Any

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from horarium.actions.base import ActionResult, ExecutionContext
from horarium.actions.execution import execution_headers
from horarium.actions.fields import (
    ActionInputError,
    lenient_string_map,
    lenient_text,
    lookup,
    section,
)
from horarium.actions.http_history import (
    BODY_CHARS,
    failure_message,
    refusal_message,
    response_message,
)
from horarium.actions.oauth import TokenCache, TokenError
from horarium.actions.outbound import OutboundRefused
from horarium.actions.tls import ClientCertificates
from horarium.model.actions import FRAMING_RULE, is_framing_header

# Bytes of a response read: 1024 characters of UTF-8 and room for the secrets masked in them.
READ_LIMIT = BODY_CHARS * 4 + 12 * 1024
DEFAULT_CONTENT_TYPE = "text/plain; charset=utf-8"  # what .NET's StringContent sends
MAX_REDIRECTS = 10
REDIRECTS = frozenset({301, 302, 303, 307, 308})
BODY_HEADERS = ("Content-Type", "Content-Encoding", "Content-Language", "Content-Location")
# Headers that go only to the job's own origin: these names, and any name containing a word
# that credentials are named with (X-Functions-Key, Ocp-Apim-Subscription-Key, X-Auth-Token, …).
ORIGIN_ONLY_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "host"})
CREDENTIAL_WORDS = (
    "auth", "key", "token", "secret", "password", "cookie", "session", "signature", "credential",
)  # fmt: skip


class _Outgoing:
    """One attempt's request, as redirects change it."""

    __slots__ = ("data", "headers", "hops", "method", "ssl", "url")

    def __init__(
        self,
        url: URL,
        method: str,
        headers: CIMultiDict[str],
        data: bytes | None,
        ssl: ssl.SSLContext | bool,
    ) -> None:
        self.url = url
        self.method = method
        self.headers = headers
        self.data = data
        self.ssl = ssl
        self.hops = 0


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
        url = _target(lenient_text(request, "uri", "request") or "")
        method = (lenient_text(request, "method", "request") or "").upper()
        if not method.isalpha():
            raise ActionInputError("'request.method' must be an HTTP method such as GET or POST")
        headers: CIMultiDict[str] = CIMultiDict(lenient_string_map(request, "headers", "request"))
        headers.popall("Content-Length", None)
        framing = next((name for name in headers if is_framing_header(name)), None)
        if framing is not None:  # stored before the API refused such headers: never sent
            raise ActionInputError(f"'request.headers.{framing}': {FRAMING_RULE}")
        body = lenient_text(request, "body", "request", required=False)
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
                refused = _refused(exc.__cause__)
                if refused is not None:
                    reason = f"OAuth token: the request to host '{refused[0]}' was refused: "
                    return ActionResult(False, failure_message(host, reason + str(refused[1])))
                return ActionResult(False, failure_message(host, f"OAuth token: {exc}"))
        headers.update(execution_headers(context))

        outgoing = _Outgoing(url, method, headers, data, ssl_context or True)
        try:
            return await self._exchange(outgoing, host)
        except TimeoutError:
            return ActionResult(
                False, failure_message(host, f"no response within {self._timeout:g} seconds")
            )
        except aiohttp.ClientError as exc:
            refused = _refused(exc)
            if refused is not None:
                via = host if outgoing.hops else None
                return ActionResult(False, refusal_message(refused[0], refused[1], via))
            reason = _describe(exc)
            if outgoing.url.scheme == "https" and isinstance(exc, aiohttp.ServerDisconnectedError):
                # A TLS 1.3 server refuses a client certificate after the handshake, by closing.
                reason += " (a TLS server does this when it refuses the client certificate)"
            return ActionResult(False, failure_message(host, reason))
        except ssl.SSLError as exc:
            return ActionResult(False, failure_message(host, f"TLS error: {exc}"))

    async def _exchange(self, request: _Outgoing, host: str) -> ActionResult:
        """Send `request`, following redirects; the outcome of the last response."""
        timeout = self._client_timeout
        started = time.monotonic()
        while True:
            async with self._session.request(
                request.method,
                request.url,
                headers=request.headers,
                data=request.data,
                ssl=request.ssl,
                timeout=timeout,
                allow_redirects=False,
            ) as response:
                status = response.status
                target = _redirect_target(request.url, response) if status in REDIRECTS else None
                if target is None:
                    raw = await _read_capped(response.content, READ_LIMIT)
                    charset = response.charset or "utf-8"
                    response_headers = list(response.headers.items())
                    break
            if request.hops == MAX_REDIRECTS:
                reason = f"more than {MAX_REDIRECTS} redirects (the last to host '{target.host}')"
                return ActionResult(False, failure_message(host, reason))
            _follow(request, status, target)
            left = self._timeout - (time.monotonic() - started)
            if left <= 0:
                raise TimeoutError
            timeout = aiohttp.ClientTimeout(total=left)
        try:
            body_text = raw.decode(charset, errors="replace")
        except LookupError:
            body_text = raw.decode("utf-8", errors="replace")
        message, body_from = response_message(host, status, response_headers, body_text)
        return ActionResult(200 <= status < 300, message, body_from)

    async def _authenticate(
        self, auth: Mapping[str, Any], headers: CIMultiDict[str]
    ) -> ssl.SSLContext | None:
        """Apply outbound authentication; returns the client-certificate context, if any."""
        where = "request.authentication"
        kind = (lenient_text(auth, "type", where, required=False) or "NotSpecified").lower()
        if kind == "basic":
            username = lenient_text(auth, "username", where)
            password = lenient_text(auth, "password", where, required=False) or ""
            if ":" in (username or ""):
                raise ActionInputError(f"'{where}.username' must not contain ':'")
            pair = f"{username}:{password}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
            return None
        if kind == "clientcertificate":
            pfx = lenient_text(auth, "pfx", where) or ""
            pfx_password = lenient_text(auth, "password", where, required=False)
            return await self._certificates.context(pfx, pfx_password)
        if kind == "activedirectoryoauth":
            token = await self._tokens.token(
                lenient_text(auth, "tenant", where) or "",
                lenient_text(auth, "audience", where) or "",
                lenient_text(auth, "clientId", where) or "",
                lenient_text(auth, "secret", where) or "",
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


def _redirect_target(url: URL, response: aiohttp.ClientResponse) -> URL | None:
    """Where a redirect response leads, or None when it is not followed (no usable Location,
    not http(s), or from https down to http): the response itself is then the outcome."""
    location = response.headers.get("Location")
    if not location:
        return None
    try:
        target = url.join(URL(location))
    except ValueError:
        return None
    if target.scheme not in ("http", "https") or not target.host:
        return None
    if url.scheme == "https" and target.scheme == "http":
        return None
    return target.with_fragment(None)


def _follow(request: _Outgoing, status: int, target: URL) -> None:
    """Make `request` the next hop's: the method and body by the status, and no credentials
    once the hop leaves the origin."""
    if (status == 303 and request.method != "HEAD") or (
        status in (301, 302) and request.method == "POST"
    ):
        request.method = "GET"
        request.data = None
        for name in BODY_HEADERS:
            request.headers.popall(name, None)
    if _origin(target) != _origin(request.url):
        for name in [n for n in request.headers if _origin_only(n)]:
            request.headers.popall(name, None)
        request.ssl = True  # the verifying default context: no client certificate
    request.url = target
    request.hops += 1


def _origin(url: URL) -> tuple[str, str | None, int | None]:
    return url.scheme, url.host, url.port


def _origin_only(name: str) -> bool:
    lowered = name.lower()
    return lowered in ORIGIN_ONLY_HEADERS or any(word in lowered for word in CREDENTIAL_WORDS)


def _refused(exc: BaseException | None) -> tuple[str, OutboundRefused] | None:
    """The host and the policy's refusal behind a connection error, if that is what it is."""
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, OutboundRefused):
        return exc.host, exc.os_error
    return None


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
