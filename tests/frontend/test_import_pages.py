"""The import page: an upload becomes a background job; bad input gets a line-numbered report and writes nothing.

Jobs run eagerly in tests: `django_capture_on_commit_callbacks(execute=True)` stands in for the commit that queues
the job, so by the time the redirect is followed the job has ended.
"""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from verifybench.models import Completion, Dataset, ImportJob, PriorLabel, Question

from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def upload_root(settings, tmp_path):
    settings.IMPORT_UPLOAD_DIR = tmp_path / "uploads"
    return settings.IMPORT_UPLOAD_DIR


def native_row(question_id: str, completion: str = "The answer is \\boxed{2}", **extra) -> dict:
    return {
        "question_id": question_id,
        "question": f"Question {question_id}: what is 1+1?",
        "reference_answer": "2",
        "completion": completion,
        "model": "lab-model-7b",
        **extra,
    }


def jsonl(*rows) -> bytes:
    return "".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows).encode()


def upload(client, capture, content: bytes, *, name="outputs.jsonl", dataset="lab", **fields):
    with capture(execute=True):
        response = client.post(
            reverse("dataset-import"),
            {
                "file": SimpleUploadedFile(name, content),
                "dataset": dataset,
                **fields,
            },
        )
    return response


def nothing_written():
    return not Question.objects.exists() and not Completion.objects.exists() and not Dataset.objects.exists()


def test_page_opens_for_researchers_only(client, researcher, annotator):
    client.force_login(annotator)
    assert client.get(reverse("dataset-import")).status_code == 404  # research pages are not shown to annotators
    client.force_login(researcher)
    response = client.get(reverse("dataset-import"))
    assert response.status_code == 200
    assert_csp_clean(response.content.decode())
    html = response.content.decode()
    assert 'enctype="multipart/form-data"' in html and "data-drop-zone" in html
    assert "mathlabel" in html  # the native format is offered


def test_an_unlabeled_file_imports_as_a_job_and_its_page_shows_the_report(
    client, researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    response = upload(
        client,
        django_capture_on_commit_callbacks,
        jsonl(native_row("q1"), native_row("q2", "It is 3")),
        format="mathlabel",
    )
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job-detail", args=["import", job.pk])
    assert job.status == "succeeded" and job.created_by == researcher
    assert Completion.objects.count() == 2 and not PriorLabel.objects.exists()
    page = client.get(response["Location"])
    assert page.status_code == 200
    html = page.content.decode()
    assert "2 questions and" in html and "2 to annotate" in html and "2 ids made from content" in html
    assert not (upload_root_files := list(job_upload_dir().glob("*.upload"))), upload_root_files


def job_upload_dir():
    from django.conf import settings

    return settings.IMPORT_UPLOAD_DIR


@pytest.mark.parametrize(
    "name, content",
    [
        (
            "outputs.csv",
            b"question_id,question,reference_answer,completion,model\n"
            b'q1,What is 1+1?,2,The answer is 2,lab-model\nq2,"What is 2+2, exactly?",4,4,lab-model\n',
        ),
        (
            "outputs.jsonl",
            jsonl(
                {
                    "question_id": "q1",
                    "messages": [
                        {"role": "system", "content": "Answer briefly."},
                        {"role": "user", "content": "What is 1+1?"},
                    ],
                    "reference_answer": "2",
                    "completion": "2",
                    "model": "lab-model",
                }
            ),
        ),
    ],
)
def test_each_shape_uploads_through_the_page(client, researcher, django_capture_on_commit_callbacks, name, content):
    client.force_login(researcher)
    upload(client, django_capture_on_commit_callbacks, content, name=name)
    job = ImportJob.objects.get()
    assert job.status == "succeeded", job.report
    assert Completion.objects.count() == job.report["completions_created"] >= 1


def test_a_parquet_file_uploads_through_the_page(client, researcher, django_capture_on_commit_callbacks):
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([native_row("q1"), native_row("q2")]), buffer)
    client.force_login(researcher)
    upload(client, django_capture_on_commit_callbacks, buffer.getvalue(), name="outputs.parquet")
    job = ImportJob.objects.get()
    assert job.status == "succeeded", job.report
    assert job.report["file_type"] == "parquet" and Completion.objects.count() == 2


def rejected(client, capture, content: bytes, **fields) -> tuple[ImportJob, str]:
    response = upload(client, capture, content, **fields)
    job = ImportJob.objects.get()
    page = client.get(response["Location"])
    assert page.status_code == 200
    return job, page.content.decode()


def first_error(job: ImportJob) -> dict:
    assert job.status == "failed" and job.report and job.report["ok"] is False, job.report
    return job.report["errors"][0]


def test_an_empty_file_is_refused_on_the_form(client, researcher, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    response = upload(client, django_capture_on_commit_callbacks, b"")
    assert response.status_code == 400
    assert "The submitted file is empty." in response.content.decode()
    assert not ImportJob.objects.exists() and nothing_written()


def test_a_file_of_blank_lines_is_rejected_as_empty(client, researcher, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    job, html = rejected(client, django_capture_on_commit_callbacks, b"\n\n  \n", format="mathlabel")
    assert (
        job.status == "failed"
        and job.error == "Rejected outputs.jsonl: the file is empty: it has no rows to import. Nothing was written."
    )
    assert nothing_written()


def test_a_non_utf8_file_is_rejected_with_its_line(client, researcher, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    content = jsonl(native_row("q1")) + json.dumps(native_row("q2")).encode().replace(b"Question", b"Qu\xe9stion")
    job, html = rejected(client, django_capture_on_commit_callbacks, content, format="mathlabel")
    error = first_error(job)
    assert error["line"] == 2 and "UTF-8" in error["reason"]
    assert nothing_written() and "Nothing was written" in html


def test_truncated_json_is_rejected_with_its_line(client, researcher, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    content = jsonl(native_row("q1"), native_row("q2")) + json.dumps(native_row("q3")).encode()[:40]
    job, html = rejected(client, django_capture_on_commit_callbacks, content, format="mathlabel")
    error = first_error(job)
    assert error["line"] == 3 and "JSON" in error["reason"]
    assert nothing_written()
    assert '<td class="number">3</td>' in html


def test_wrong_types_are_rejected_with_line_and_field(client, researcher, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    content = jsonl(native_row("q1"), native_row("q2", completion=["not", "text"]))
    job, html = rejected(client, django_capture_on_commit_callbacks, content, format="mathlabel")
    error = first_error(job)
    assert (error["line"], error["field"]) == (2, "completion")
    assert nothing_written() and "completion" in html


def test_duplicate_ids_are_rejected(client, researcher, django_capture_on_commit_callbacks):
    client.force_login(researcher)
    row = native_row("q1", completion_id="c1")
    content = jsonl(row, {**row, "completion": "A different completion under the same id"})
    job, _ = rejected(client, django_capture_on_commit_callbacks, content, format="mathlabel")
    assert job.status == "failed"
    problems = job.report["errors"] + job.report["conflicts"]
    assert any(problem["line"] == 2 for problem in problems), problems
    assert nothing_written()


def test_a_bad_last_line_in_a_100000_line_file_rejects_the_whole_file(
    client, researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    lines = [
        json.dumps(native_row(f"q{index // 4}", f"Answer {index}", completion_id=f"c{index}"))
        for index in range(99_999)
    ]
    lines.append('{"question_id": "last", "question": "cut off')
    job, html = rejected(
        client, django_capture_on_commit_callbacks, ("\n".join(lines) + "\n").encode(), format="mathlabel"
    )
    error = first_error(job)
    assert error["line"] == 100_000
    assert job.report["lines"] == 100_000
    assert nothing_written()
    assert "100000" in html or "100,000" in html


def test_skipping_invalid_rows_keeps_the_rest_and_offers_the_skipped_rows(
    client, researcher, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    content = jsonl(native_row("q1"), "{not json", native_row("q2"))
    response = upload(client, django_capture_on_commit_callbacks, content, format="mathlabel", skip_invalid="on")
    job = ImportJob.objects.get()
    assert job.status == "succeeded" and job.report["rejected_lines"] == 1
    html = client.get(response["Location"]).content.decode()
    rejects_url = reverse("import-rejects", args=[job.pk])
    assert rejects_url in html
    download = client.get(rejects_url)
    assert download.status_code == 200
    assert json.loads(b"".join(download.streaming_content).decode().splitlines()[0])["line"] == 2


def test_form_errors_stay_on_the_page(client, researcher):
    client.force_login(researcher)
    missing = client.post(reverse("dataset-import"), {"dataset": "lab"})
    assert missing.status_code == 400 and "This field is required" in missing.content.decode()
    unknown = client.post(
        reverse("dataset-import"), {"file": SimpleUploadedFile("a.jsonl", b"{}\n"), "dataset": "lab", "format": "xml"}
    )
    assert unknown.status_code == 400
    assert not ImportJob.objects.exists()


def test_an_upload_over_the_limit_is_refused_before_any_job(client, researcher, settings):
    settings.IMPORT_MAX_UPLOAD_BYTES = 100
    client.force_login(researcher)
    response = client.post(
        reverse("dataset-import"),
        {"file": SimpleUploadedFile("big.jsonl", jsonl(native_row("q1"), native_row("q2"))), "dataset": "lab"},
    )
    assert response.status_code == 400
    assert "upload limit" in response.content.decode()
    assert not ImportJob.objects.exists() and not list(job_upload_dir().glob("*"))


def test_a_file_for_an_existing_dataset_goes_to_its_workspace_without_asking(
    client, researcher, django_capture_on_commit_callbacks
):
    """A researcher of two workspaces adds verdicts to a dataset of the second: the form takes the dataset's
    workspace, and asks for one only for a new dataset."""
    from core.models import Workspace, WorkspaceMember
    from grading.models import Verdict

    second = Workspace.objects.create(name="Second team")
    WorkspaceMember.objects.create(workspace=second, user=researcher)
    client.force_login(researcher)
    made = upload(
        client, django_capture_on_commit_callbacks, jsonl(native_row("q1")), dataset="team-set", workspace=second.pk
    )
    assert made.status_code == 302
    dataset = Dataset.objects.get(name="team-set")
    assert dataset.workspace == second
    completion_id = Completion.objects.get(question__dataset=dataset).external_id
    verdicts = jsonl({"question_id": "q1", "completion_id": completion_id, "verifier": "harness", "verdict": True})
    added = upload(client, django_capture_on_commit_callbacks, verdicts, name="verdicts.jsonl", dataset="team-set")
    assert added.status_code == 302, added.content.decode()[:2000]
    job = ImportJob.objects.order_by("-pk").first()
    assert job.status == "succeeded" and job.report["verdicts_created"] == 1
    assert Verdict.objects.get().verifier.workspace == second
    html = client.get(added["Location"]).content.decode()
    assert "1 verdict written" in html and "harness" in html

    new = upload(client, django_capture_on_commit_callbacks, jsonl(native_row("q9")), dataset="brand-new")
    assert new.status_code == 400 and "Choose the workspace a new dataset belongs to" in new.content.decode()
