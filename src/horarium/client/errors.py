"""What can go wrong with a request: the API refused it, or it never got an answer."""

from __future__ import annotations


class ClientError(Exception):
    """A request that did not succeed; `str()` is one line."""


class ApiRefused(ClientError):
    """The API answered with an error status: its ARM error code and message (or, for an answer
    that is not an ARM error, the HTTP status)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        self.status = status
        self.code = code
        self.message = " ".join(message.split())
        super().__init__(f"{code}: {self.message}")


class Unreachable(ClientError):
    """No answer from `url`: connection refused, name not resolved, TLS failure, timeout."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = " ".join(reason.split())
        super().__init__(f"cannot reach {url}: {self.reason}")
