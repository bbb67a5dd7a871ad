"""HTTP for the client: the token, retries on 429 and 503 with the server's Retry-After, errors as exceptions
carrying the API's message, and pagination in every shape the API answers (pages of `results` with `next`
links, keyset pages of the item browser, plain lists)."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import httpx2

from . import errors

RETRY_STATUSES = frozenset({429, 503})
Files = Callable[[], Mapping[str, Any]]


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date; None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Http:
    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        timeout: float,
        max_retries: int,
        max_retry_wait: float,
        user_agent: str,
        transport: httpx2.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        headers = {"Accept": "application/json", "User-Agent": user_agent}
        if token:
            headers["Authorization"] = f"Token {token}"
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self._sleep = sleep
        self._client = httpx2.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport, follow_redirects=False
        )

    def close(self) -> None:
        self._client.close()

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Files | None = None,
        stream: bool = False,
        headers: Mapping[str, str] | None = None,
    ) -> httpx2.Response:
        """Send a request; 429 and 503 are retried after the server's Retry-After (else 1, 2, 4... seconds), at most
        `max_retries` times and never waiting longer than `max_retry_wait` at once. Other failures raise."""
        url = self.url(path)
        clean_params = {key: value for key, value in (params or {}).items() if value is not None}
        attempt = 0
        while True:
            request = self._client.build_request(
                method,
                url,
                params=clean_params or None,
                json=json,
                data=data,
                files=files() if files is not None else None,
                headers=headers,
            )
            response = self._client.send(request, stream=stream)
            if response.status_code not in RETRY_STATUSES or attempt >= self.max_retries:
                break
            wait = retry_after_seconds(response.headers.get("Retry-After"))
            response.close()
            self._sleep(min(self.max_retry_wait, wait if wait is not None else 2.0**attempt))
            attempt += 1
        if response.status_code >= 400:
            if stream:
                response.read()
            raise self._error(response)
        return response

    def _error(self, response: httpx2.Response) -> errors.ApiError:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        fallback = f"{response.status_code} {response.reason_phrase}".strip()
        if isinstance(body, str) and body.lstrip().startswith("<"):
            body_message = fallback  # an HTML page: its status says more than its markup
        else:
            body_message = errors.message_of(body, fallback)
        return errors.error_class(response.status_code)(
            body_message,
            status_code=response.status_code,
            method=response.request.method,
            url=str(response.request.url),
            body=body,
        )

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.request(method, path, **kwargs)
        if response.status_code == 204 or not response.content:
            return None
        return response.json()

    def get(self, path: str, **params: Any) -> Any:
        return self.json("GET", path, params=params)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.json("POST", path, json=body, **kwargs)

    def patch(self, path: str, body: Any) -> Any:
        return self.json("PATCH", path, json=body)

    def delete(self, path: str) -> Any:
        return self.json("DELETE", path)

    def pages(self, path: str, **params: Any) -> Iterator[list[dict[str, Any]]]:
        """Each page of a listing, following its `next` links to the end; a plain list is one page."""
        body = self.get(path, **params)
        while True:
            if isinstance(body, list):
                yield body
                return
            yield list(body.get("results", []))
            following = body.get("next")
            if not following:
                return
            body = self.json("GET", following)

    def each(self, path: str, **params: Any) -> Iterator[Any]:
        for page in self.pages(path, **params):
            yield from page

    def all(self, path: str, **params: Any) -> list[Any]:
        return list(self.each(path, **params))
