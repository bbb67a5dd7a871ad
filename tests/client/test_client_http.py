"""The client's HTTP: 429 and 503 retried after Retry-After (seconds or a date), giving up with the API's message,
an upload sent whole again on a retry, every error status as its exception, and every page of a listing.

Retries are checked against a local HTTP server that answers as scripted; pagination against the live app."""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime, timedelta

import pytest

from mathlabel_client import (
    ApiError,
    AuthenticationFailed,
    BadRequest,
    Client,
    Conflict,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    ServiceUnavailable,
)
from mathlabel_client._http import retry_after_seconds
from tests.fakes.http_receiver import Answer
from verifybench.models import Dataset


@pytest.fixture
def scripted(receiver):
    """A client of the scripted server that records the waits it would make instead of sleeping."""
    client = Client(receiver.url, "a-token", max_retries=3, max_retry_wait=30)
    waits: list[float] = []
    client._http._sleep = waits.append
    yield client, receiver, waits
    client.close()


def test_a_503_and_a_429_are_retried_after_their_retry_after(scripted):
    client, server, waits = scripted
    later = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    server.script(
        Answer.json(503, {"detail": "The database cannot be reached."}, **{"Retry-After": "7"}),
        Answer.json(429, {"detail": "Request was throttled."}, **{"Retry-After": later}),
    )
    server.handler = lambda request: Answer.json(200, [{"kind": "import", "id": 1}])
    assert client.jobs.list() == [{"kind": "import", "id": 1}]
    assert [request.answer.status for request in server.requests] == [503, 429, 200]
    assert waits[0] == 7 and 15 < waits[1] <= 20
    assert server.requests[0].header("Authorization") == "Token a-token"
    assert server.requests[0].header("User-Agent").startswith("mathlabel-client/")


def test_retries_give_up_with_the_apis_message_and_never_wait_longer_than_the_cap(scripted):
    client, server, waits = scripted
    server.handler = lambda request: Answer.json(429, {"detail": "Too many failed sign-ins."}, **{"Retry-After": "900"})
    with pytest.raises(RateLimited, match="Too many failed sign-ins") as refused:
        client.projects.list()
    assert refused.value.status_code == 429 and len(server.requests) == 4 and waits == [30, 30, 30]

    waits.clear()
    server.requests.clear()
    server.handler = lambda request: Answer.json(503, {"detail": "The database cannot be reached."})
    with pytest.raises(ServiceUnavailable, match="cannot be reached"):
        client.datasets.get(1)
    assert waits == [1, 2, 4]  # no Retry-After: 1, 2, 4 seconds


def test_an_upload_is_sent_whole_again_when_it_is_retried(scripted, tmp_path):
    client, server, waits = scripted
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"question_id": "q1"}\n' * 1000)
    server.script(Answer.json(503, {"detail": "busy"}, **{"Retry-After": "0"}))
    server.handler = lambda request: Answer.json(202, {"id": 5, "status": "queued"})
    assert client.datasets.import_file(path, "lab", wait=False) == {"id": 5, "status": "queued"}
    first, second = server.requests
    for request in (first, second):  # each a whole multipart body (with its own boundary)
        assert path.read_bytes() in request.body and b'name="dataset"' in request.body
    assert len(first.body) == len(second.body)


@pytest.mark.parametrize(
    "answer, error, message",
    [
        (
            Answer.json(400, {"url": ["not allowed"], "events": ["choose one"]}),
            BadRequest,
            "url: not allowed; events: choose one",
        ),
        (Answer.json(400, {"non_field_errors": ["Unable to log in."]}), BadRequest, "Unable to log in."),
        (Answer.json(401, {"detail": "Invalid token."}), AuthenticationFailed, "Invalid token."),
        (Answer.json(409, {"detail": "export 3 has already ended (succeeded)"}), Conflict, "has already ended"),
        (Answer.json(413, {"detail": "the upload is too large"}), PayloadTooLarge, "too large"),
        (Answer(500, b"<html><body>Server Error</body></html>", {"Content-Type": "text/html"}), ServerError, "500"),
        (Answer(418, b"teapot", {"Content-Type": "text/plain"}), ApiError, "teapot"),
    ],
)
def test_each_refusal_is_its_exception_with_the_apis_message(scripted, answer, error, message):
    client, server, _ = scripted
    server.handler = lambda request: answer
    with pytest.raises(error, match=message) as raised:
        client.verifiers.get(1)
    assert raised.value.status_code == answer.status and raised.value.method == "GET"
    assert f"{answer.status}: " in str(raised.value)


def test_retry_after_is_read_as_seconds_or_an_http_date():
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert retry_after_seconds("12", now) == 12
    assert retry_after_seconds("Thu, 01 Jan 2026 00:00:30 GMT", now) == 30
    assert retry_after_seconds("Wed, 31 Dec 2025 00:00:00 GMT", now) == 0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None) is None


@pytest.mark.django_db(transaction=True)
def test_a_listing_follows_every_page(lab):
    Dataset.objects.bulk_create([Dataset(name=f"set-{index:03d}") for index in range(57)])  # pages of 50
    names = [dataset["name"] for dataset in lab.client.datasets.list()]
    assert names == [f"set-{index:03d}" for index in range(57)]
    assert [dataset["name"] for dataset in lab.client.datasets.list(search="set-05")] == [
        f"set-05{index}" for index in range(7)
    ]
    assert lab.client.jobs.list() == []  # a plain list: one page
