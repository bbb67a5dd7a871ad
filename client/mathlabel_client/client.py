"""`Client`: one object per server, with a group of typed methods per part of the API."""

from __future__ import annotations

import os
from typing import Any

import httpx2

from ._http import Http
from .datasets import Datasets
from .evaluation import Evaluation
from .exports import Exports
from .items import Items
from .jobs import Jobs
from .projects import Projects, Tasks
from .verification import Runs, Selections, Verifiers
from .version import __version__
from .webhooks import Webhooks

TOKEN_VARIABLE = "MATHLABEL_TOKEN"


class Client:
    """A mathlabel server. The token comes from the argument, else from the `MATHLABEL_TOKEN` environment variable
    (`Client.login` gets one with a username and password).

    Groups: `datasets` (and imports), `verifiers`, `runs`, `selections`, `projects`, `tasks` (an annotator's side),
    `items`, `exports`, `evaluation`, `webhooks`, `jobs` (every background job). Each returns the API's JSON, typed
    (mathlabel_client.types); refused requests raise ApiError subclasses carrying the API's message, 429 and 503
    are retried after the server's Retry-After, and listings follow every page.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout: float = 60.0,
        max_retries: int = 5,
        max_retry_wait: float = 60.0,
        transport: httpx2.BaseTransport | None = None,
    ):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get(TOKEN_VARIABLE) or None
        self._http = Http(
            self.url,
            self.token,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            user_agent=f"mathlabel-client/{__version__}",
            transport=transport,
        )
        self.jobs = Jobs(self._http)
        self.datasets = Datasets(self._http)
        self.verifiers = Verifiers(self._http)
        self.runs = Runs(self._http, self.verifiers)
        self.selections = Selections(self._http, self.jobs)
        self.projects = Projects(self._http, self.jobs)
        self.tasks = Tasks(self._http)
        self.items = Items(self._http)
        self.exports = Exports(self._http)
        self.evaluation = Evaluation(self._http)
        self.webhooks = Webhooks(self._http)

    @classmethod
    def login(cls, url: str, username: str, password: str, **options: Any) -> Client:
        """Sign in with a username and password and use the token the server issues (it expires; see `token`)."""
        with cls(url, token="", **options) as anonymous:
            answer = anonymous._http.json("POST", "/api/auth/token/", data={"username": username, "password": password})
        return cls(url, answer["token"], **options)

    def logout(self) -> None:
        """Revoke this client's token on the server."""
        self._http.delete("/api/auth/token/")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"
