"""Keeping secrets out of history messages, whatever a library put into its error text."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import parse_qsl, quote

MASK = "***"


def redact(message: str, secrets: Iterable[str | None]) -> str:
    """Replace every secret (and its URL-encoded spelling) in `message` with ***."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        for form in {secret, quote(secret, safe=""), quote(secret)}:
            if len(form) >= 3:
                message = message.replace(form, MASK)
    return message


def sas_parts(sas_token: str | None) -> list[str]:
    """A SAS token and its signature value, which error texts may quote on their own."""
    if not sas_token:
        return []
    parts = [sas_token, sas_token.lstrip("?")]
    parts += [value for key, value in parse_qsl(sas_token.lstrip("?")) if key == "sig"]
    return parts
