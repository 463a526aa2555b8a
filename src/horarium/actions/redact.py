"""Keeping secrets out of history messages, whatever a library put into its error text or a
target echoed back: each secret is masked in every form it travels or is echoed in."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote

MASK = "***"
# What a cut may leave of a secret at the end of a text and still be masked (shorter rests
# cannot be told from ordinary text).
CUT_REST = 8


def redact(message: str, secrets: Iterable[str | None], *, cut: bool = False) -> str:
    """Replace every secret in `message` with ***, in each of its `forms`; `cut`: the message
    may end inside a secret (a read limit or a length cut it), so a rest of CUT_REST or more
    characters of one at the end is masked too."""
    forms = sorted({f for s in secrets if s for f in _forms(s) if len(f) >= 3}, key=len)
    for form in reversed(forms):  # the longest first: a secret inside another is masked once
        message = message.replace(form, MASK)
    if cut:
        for form in forms:
            rest = _rest_at_end(message, form)
            if rest >= CUT_REST:
                message = message[:-rest] + MASK
    return message


def _forms(secret: str) -> set[str]:
    """The secret as given, URL-encoded, escaped in a JSON string, and in Base64."""
    encoded = secret.encode()
    standard = base64.b64encode(encoded).decode()
    urlsafe = base64.urlsafe_b64encode(encoded).decode()
    return {
        secret,
        quote(secret, safe=""),
        quote(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        standard,
        standard.rstrip("="),
        urlsafe,
        urlsafe.rstrip("="),
    }


def _rest_at_end(text: str, form: str) -> int:
    """The length of the longest beginning of `form`, shorter than it, that `text` ends with
    (Knuth-Morris-Pratt over the last len(form) - 1 characters: linear time)."""
    if len(form) < 2:
        return 0
    border = [0] * len(form)
    k = 0
    for i in range(1, len(form)):
        while k and form[i] != form[k]:
            k = border[k - 1]
        if form[i] == form[k]:
            k += 1
        border[i] = k
    matched = 0
    for ch in text[-(len(form) - 1) :]:
        while matched and (matched == len(form) or ch != form[matched]):
            matched = border[matched - 1]
        if ch == form[matched]:
            matched += 1
    return matched if matched < len(form) else 0


def sas_parts(sas_token: str | None) -> list[str]:
    """A SAS token and its signature value, which error texts may quote on their own."""
    if not sas_token:
        return []
    parts = [sas_token, sas_token.lstrip("?")]
    parts += [value for key, value in parse_qsl(sas_token.lstrip("?")) if key == "sig"]
    return parts
