"""The exceptions the client raises. Every answer of the API that is not a success becomes an `ApiError` (a subclass
per status) whose message is the API's own; a job that ends without its result raises `JobFailed`."""

from __future__ import annotations

from typing import Any


class MathlabelError(Exception):
    """Anything the client raises on purpose."""


class ApiError(MathlabelError):
    """The server refused or failed a request. `message` is what the API said; `body` its whole answer."""

    status_code: int = 0

    def __init__(self, message: str, *, status_code: int, method: str = "", url: str = "", body: Any = None):
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.method = method
        self.url = url
        self.body = body

    def __str__(self) -> str:
        where = f" ({self.method} {self.url})" if self.method else ""
        return f"{self.status_code}: {self.message}{where}"


class BadRequest(ApiError):
    """400: the request was refused as given (a missing field, a value the rules do not allow)."""


class AuthenticationFailed(ApiError):
    """401: no token, or a token that is wrong or expired."""


class PermissionDenied(ApiError):
    """403: the account's role may not do this."""


class NotFound(ApiError):
    """404: no such object, or one this account may not see."""


class Conflict(ApiError):
    """409: refused as things stand (a job already ended, an object still in use)."""


class PayloadTooLarge(ApiError):
    """413: an upload over the server's limit."""


class RateLimited(ApiError):
    """429 after every retry: too many requests, or sign-ins locked for a while."""


class ServiceUnavailable(ApiError):
    """503 after every retry: the server cannot reach its database."""


class ServerError(ApiError):
    """Any other 5xx."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthenticationFailed,
    403: PermissionDenied,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    429: RateLimited,
    503: ServiceUnavailable,
}


def error_class(status_code: int) -> type[ApiError]:
    if status_code in _BY_STATUS:
        return _BY_STATUS[status_code]
    return ServerError if status_code >= 500 else ApiError


def message_of(body: Any, fallback: str) -> str:
    """The API's message: its `detail`, or each refused field with its reasons ("url: ...; events: ...")."""
    if isinstance(body, dict):
        if isinstance(body.get("detail"), str) and len(body) == 1:
            return body["detail"]
        parts = []
        for field, reasons in body.items():
            text = "; ".join(_flatten(reasons))
            parts.append(text if field in ("detail", "non_field_errors") else f"{field}: {text}")
        return "; ".join(part for part in parts if part) or fallback
    if isinstance(body, list):
        return "; ".join(_flatten(body)) or fallback
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


def _flatten(value: Any) -> list[str]:
    if isinstance(value, list):
        return [text for item in value for text in _flatten(item)]
    if isinstance(value, dict):
        return [f"{key}: {'; '.join(_flatten(item))}" for key, item in value.items()]
    return [str(value)]


class JobFailed(MathlabelError):
    """A background job (import, run, export, project setup) ended failed or cancelled; `job` is its last state."""

    def __init__(self, job: dict[str, Any]):
        status, error = job.get("status", ""), job.get("error", "")
        super().__init__(f"{job.get('title') or 'the job'} {status}" + (f": {error}" if error else ""))
        self.job = job
        self.status = status
        self.error = error


class WaitTimeout(MathlabelError):
    """A job was still running when the wait's `timeout` ran out (the job goes on)."""
