"""The history message of an HTTP action, in the live service's form.

Recorded on the live service (JobHistoryList session record, 2016):
``Http Action - Response from host 'www.bing.com': 'OK' Response Headers: Vary: …\\r\\n…\\r\\n
Body: <first 1024 characters>``. The status is .NET's HttpStatusCode name; the headers are the
response headers without the content headers (as .NET's HttpResponseMessage.Headers lists them),
one ``Name: value`` line each, repeated values joined by ", "; the body is cut at 1024
characters (2 KB of UTF-16, the documented cap), without a marker — after the secrets in it
are masked.
"""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus

from horarium.actions.redact import redact

BODY_CHARS = 1024

# .NET keeps these on HttpContent, not on the response, so the live message never shows them.
CONTENT_HEADERS = frozenset(
    {
        "allow",
        "content-disposition",
        "content-encoding",
        "content-language",
        "content-length",
        "content-location",
        "content-md5",
        "content-range",
        "content-type",
        "expires",
        "last-modified",
    }
)


def status_name(code: int) -> str:
    """HttpStatusCode's name for a status (404 -> 'NotFound'); the number when it has none."""
    if code == 200:
        return "OK"
    try:
        name = HTTPStatus(code).name
    except ValueError:
        return str(code)
    return "".join(word.capitalize() for word in name.split("_"))


def header_lines(headers: Iterable[tuple[str, str]]) -> str:
    """`Name: v1, v2\\r\\n` per header name, in first-seen order, content headers left out."""
    merged: dict[str, tuple[str, list[str]]] = {}
    for name, value in headers:
        if name.lower() in CONTENT_HEADERS:
            continue
        merged.setdefault(name.lower(), (name, []))[1].append(value)
    return "".join(f"{name}: {', '.join(values)}\r\n" for name, values in merged.values())


def response_message(
    host: str, status: int, headers: Iterable[tuple[str, str]], body: str
) -> tuple[str, int]:
    """The message with the whole `body`, and where the body starts: it is cut to BODY_CHARS
    once the secrets are masked (`cut_body`), so that a cut never leaves part of one."""
    head = (
        f"Http Action - Response from host '{host}': '{status_name(status)}' "
        f"Response Headers: {header_lines(headers)} Body: "
    )
    return head + body, len(head)


def cut_body(body: str, secrets: Iterable[str]) -> str:
    """`body` (which the read limit may have cut) with the secrets masked, then cut to
    BODY_CHARS; what a cut leaves of a secret at the end is masked too."""
    secrets = list(secrets)
    masked = redact(body, secrets, cut=True)
    if len(masked) <= BODY_CHARS:
        return masked
    return redact(masked[:BODY_CHARS], secrets, cut=True)


def failure_message(host: str, reason: str) -> str:
    """No response at all (timeout, refused connection, TLS): not recorded live; our form."""
    return f"Http Action - Request to host '{host}' failed: {reason}"


def refusal_message(host: str, reason: OSError | str, redirected_from: str | None = None) -> str:
    """The outbound policy refused the connection: nothing was sent. Our form."""
    via = f" (redirected from host '{redirected_from}')" if redirected_from else ""
    return f"Http Action - Request to host '{host}'{via} was refused: {reason}"
