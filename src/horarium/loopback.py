"""Whether a host names this machine's loopback interface, read from its text alone (no name
is resolved): the API's exposure checks, the outbound channels and the CLI's token handling
ask it before anything secret travels in clear."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 (bracketed or not) or localhost."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def is_loopback_url(url: str) -> bool:
    """Whether `url`'s host is a loopback address (`is_loopback`)."""
    return is_loopback(urlsplit(url).hostname or "")
