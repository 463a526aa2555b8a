"""The API's failures as values: each carries the HTTP status and ARM error code it becomes."""

from __future__ import annotations


class ApiError(Exception):
    """A request the service refuses; rendered as ARM `{"error": {"code", "message"}}`."""

    status = 400
    code = "BadRequest"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuilt with its code when it crosses a process boundary (api/offload.py).
        return (_rebuilt, (type(self), self.message, self.code))


def _rebuilt(kind: type[ApiError], message: str, code: str) -> ApiError:
    return kind(message, code=code)


class BadRequest(ApiError):
    """Malformed or invalid input; the message names the field and the rule."""


class NotFound(ApiError):
    status = 404
    code = "ResourceNotFound"


class Conflict(ApiError):
    """A quota or plan limit, or a state change a final job cannot take."""

    status = 409
    code = "Conflict"
