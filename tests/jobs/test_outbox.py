"""A job and its message never disagree: a job stored while the broker is down is sent by the sweep once the broker
answers, never answered with a 500, and never stored twice."""

from __future__ import annotations

import io
import json

import pytest

from core.jobs import runner
from verifybench.models import Dataset, ImportJob

pytestmark = pytest.mark.django_db


def upload(name: str = "outbox.jsonl"):
    row = {"question_id": "q1", "question": "1+1?", "reference_answer": "2", "completion": "2", "model": "m"}
    data = io.BytesIO((json.dumps(row) + "\n").encode())
    data.name = name
    return data


@pytest.fixture
def broker_down(monkeypatch):
    """The broker cannot be reached: sending a message raises, as kombu does when Redis is stopped."""
    sent = []
    original = runner._dispatch[:]

    def unreachable(kind, job_id, attempt):
        raise ConnectionRefusedError("Error 111 connecting to 127.0.0.1:6399. Connection refused.")

    runner.set_dispatcher(unreachable)
    yield sent
    runner._dispatch[:] = original


def test_a_job_stored_while_the_broker_is_down_is_answered_and_sent_later(
    broker_down, researcher, api_client_for, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.IMPORT_UPLOAD_DIR = tmp_path
    client = api_client_for(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/datasets/import/", {"file": upload(), "dataset": "outbox"}, format="multipart")
    assert response.status_code == 202, response.content
    job = ImportJob.objects.get()
    assert job.status == "queued" and job.dispatched_at is None

    ImportJob.objects.filter(pk=job.pk).update(created_at=job.created_at.replace(year=job.created_at.year - 1))
    assert runner.sweep().requeued == []  # still unreachable: nothing sent, nothing lost
    assert ImportJob.objects.get(pk=job.pk).dispatched_at is None

    sent = []
    runner.set_dispatcher(lambda kind, job_id, attempt: sent.append((kind, job_id, attempt)))
    assert runner.sweep().requeued == [("import", job.pk)]
    assert sent == [("import", job.pk, 1)] and ImportJob.objects.get(pk=job.pk).dispatched_at is not None
    assert runner.sweep().requeued == []  # sent once: the next sweep leaves it to the broker
    assert ImportJob.objects.count() == 1 and not Dataset.objects.exists()


def test_a_message_sent_long_ago_that_nobody_took_is_sent_again(broker_down, settings):
    sent = []
    runner.set_dispatcher(lambda kind, job_id, attempt: sent.append(job_id))
    job = ImportJob.objects.create(dataset_name="lost", upload_path="x", source_name="x.jsonl")
    runner.publish(runner.get_kind("import"), job.pk, job.attempt)
    assert sent == [job.pk]
    settings.JOB_REQUEUE_SECONDS = 0
    ImportJob.objects.filter(pk=job.pk).update(dispatched_at=job.created_at)
    assert runner.sweep().requeued == [("import", job.pk)] and sent == [job.pk, job.pk]
