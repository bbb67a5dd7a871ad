"""`manage.py jobs`: list jobs of every kind, and cancel, resume, restart and run them from the command line."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from verifybench import imports
from verifybench.models import Completion, ImportJob

pytestmark = pytest.mark.django_db

ROW = {"question_id": "q1", "question": "What is 1+1?", "reference_answer": "2", "completion": "2", "model": "m"}


@pytest.fixture(autouse=True)
def upload_root(settings, tmp_path):
    settings.IMPORT_UPLOAD_DIR = tmp_path


def queued_import(content: bytes = (json.dumps(ROW) + "\n").encode()) -> ImportJob:
    return imports.create_import(uploaded=SimpleUploadedFile("rows.jsonl", content), dataset_name="lab", enqueue=False)


def jobs(*args) -> str:
    out = io.StringIO()
    call_command("jobs", *args, stdout=out)
    return out.getvalue()


def test_lists_jobs_of_every_kind_newest_first():
    first, second = queued_import(), queued_import()
    listed = json.loads(jobs("--json"))
    assert [(job["kind"], job["id"]) for job in listed] == [("import", second.pk), ("import", first.pk)]
    assert f"import-{second.pk}" in jobs()
    assert json.loads(jobs("--kind", "export", "--json")) == []
    assert jobs("--status", "failed") == "No jobs.\n"


def test_runs_a_queued_job_here():
    job = queued_import()
    payload = json.loads(jobs("run", f"import-{job.pk}", "--json"))
    assert payload["status"] == "succeeded"
    assert Completion.objects.count() == 1


def test_cancels_then_restarts_here():
    job = queued_import()
    assert json.loads(jobs("cancel", f"import-{job.pk}", "--json"))["status"] == "cancelled"
    restarted = json.loads(jobs("restart", f"import-{job.pk}", "--here", "--json"))
    assert (restarted["status"], restarted["attempt"]) == ("succeeded", 2)
    assert Completion.objects.count() == 1


def test_refusals_and_bad_names_are_command_errors():
    job = queued_import()
    with pytest.raises(CommandError, match="already queued"):
        jobs("restart", f"import-{job.pk}")
    with pytest.raises(CommandError, match="KIND-ID"):
        jobs("cancel")
    with pytest.raises(CommandError, match="KIND-ID"):
        jobs("cancel", "import-x")
    with pytest.raises(CommandError, match="unknown job kind"):
        jobs("cancel", "nothing-1")
    with pytest.raises(CommandError, match="no import 999"):
        jobs("cancel", "import-999")


def test_sweep_reports_what_it_took_over():
    assert json.loads(jobs("sweep")) == {"resumed": [], "requeued": [], "failed": []}
