"""Verification runs, selections and exports from the researcher pages, through Django's test client.

Tasks run eagerly in-process (no broker in tests): a job queued when the request's transaction commits has ended by
the time the response is back, so `django_capture_on_commit_callbacks(execute=True)` stands in for the commit.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse
from django.utils import timezone

from annotation import services as annotation_services
from annotation.models import AnnotationProject, ProjectMember
from grading import runs
from grading.models import SelectionRecord, Verdict, VerificationRun
from reports import services as export_services
from reports.models import ExportJob
from verifybench.models import Completion

from .jobs_fixtures import correctness_project, is_right, label_everything, make_verifiable_dataset, rule_verifier
from .test_pages import assert_csp_clean

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def export_root(settings, tmp_path):
    settings.EXPORT_ROOT = tmp_path / "exports"
    return settings.EXPORT_ROOT


def messages_of(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def dashboard_url(project) -> str:
    return reverse("dashboard-project", args=[project.pk])


def verdict_counts(verifier) -> dict[str, int]:
    counts = {"correct": 0, "incorrect": 0, "inconclusive": 0}
    for status in Verdict.objects.filter(verifier=verifier).values_list("status", flat=True):
        counts[status] += 1
    return counts


# ---------------------------------------------------------------- permissions


def test_only_researchers_and_admins_reach_the_job_pages(client, annotator, make_user):
    dataset = make_verifiable_dataset()
    labellers = [make_user("annotator"), make_user("annotator")]
    project = correctness_project(dataset, annotators=labellers)
    label_everything(project, labellers)
    verifier = rule_verifier()
    run = runs.create_run(verifier=verifier, dataset=dataset, enqueue=False)
    job = export_services.create_export(project=project, format="verifybench-hard", enqueue=False)
    adjudicator = make_user("adjudicator")
    annotation_services.add_member(project, adjudicator, ProjectMember.Role.ADJUDICATOR)
    pages = [
        reverse("jobs-project-run-new", args=[project.pk]),
        reverse("jobs-project-export-new", args=[project.pk]),
        reverse("jobs-dataset", args=[dataset.pk]),
        reverse("jobs-export-download", args=[job.pk]),
    ]
    actions = [
        reverse("jobs-dataset-run-new", args=[dataset.pk]),
        reverse("jobs-dataset-select", args=[dataset.pk]),
        reverse("jobs-run-cancel", args=[run.pk]),
        reverse("jobs-run-resume", args=[run.pk]),
        reverse("jobs-export-cancel", args=[job.pk]),
        reverse("jobs-project-run-new", args=[project.pk]),
        reverse("jobs-project-export-new", args=[project.pk]),
    ]
    for user in (annotator, adjudicator):
        client.force_login(user)
        for url in pages:
            assert client.get(url).status_code == 404, (user, url)
        for url in actions:
            assert client.post(url, {"run-verifier": verifier.pk}).status_code == 404, (user, url)
    # The project's adjudicator sees its dashboard, but not the researchers' job sections.
    html = client.get(dashboard_url(project)).content.decode()
    assert 'data-testid="section-progress"' in html
    assert 'data-testid="section-runs"' not in html and 'data-testid="section-exports"' not in html
    run.refresh_from_db()
    job.refresh_from_db()
    assert run.status == job.status == "queued" and not run.cancel_requested and not job.cancel_requested

    client.logout()
    response = client.get(reverse("jobs-dataset", args=[dataset.pk]))
    assert response.status_code == 302 and reverse("login") in response.url

    client.force_login(make_user("admin"))
    assert client.get(reverse("jobs-dataset", args=[dataset.pk])).status_code == 200


# ---------------------------------------------------------------- the dashboard sections


def test_dashboard_sections_show_the_forms_without_inline_script(client, researcher):
    project = correctness_project(make_verifiable_dataset(name="Form set"))
    rule_verifier("math-rules")
    client.force_login(researcher)
    html = client.get(dashboard_url(project)).content.decode()
    assert 'data-testid="section-runs"' in html and 'data-testid="section-exports"' in html
    assert "math-rules (rule-based)" in html or "math-rules (rule" in html
    assert 'name="run-scope" value="project"' in html and 'name="run-scope" value="dataset"' in html
    for name in ("verifybench", "verifybench-hard", "mumath"):
        assert f'<option value="{name}"' in html, name
    assert "matharena-proofs" not in html  # reads proof-grading projects only
    for file_type in ("jsonl", "csv", "parquet"):
        assert f'name="export-file_types" value="{file_type}"' in html
    assert 'name="export-option_per_type"' in html and 'name="export-option_models"' in html
    assert "K per answer type" in html and "N author models" in html
    assert "<script" not in html.split("</head>")[1]
    assert_csp_clean(html)
    dataset_page = client.get(reverse("dataset-detail", args=[project.dataset_id])).content.decode()
    assert reverse("jobs-dataset", args=[project.dataset_id]) in dataset_page


def test_a_run_started_from_the_dashboard_shows_its_verdict_counts(
    client, researcher, django_capture_on_commit_callbacks
):
    dataset = make_verifiable_dataset(questions=3, per_question=4)
    project = correctness_project(dataset)
    verifier = rule_verifier()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("jobs-project-run-new", args=[project.pk]),
            {
                "run-verifier": verifier.pk,
                "run-scope": "project",
                "run-chunk_size": 5,
            },
        )
    assert response.status_code == 302 and response.url == dashboard_url(project) + "#verification-runs"
    run = VerificationRun.objects.get()
    assert run.project == project and run.created_by == researcher and run.chunk_size == 5
    assert run.status == "succeeded" and run.done == run.total == 12
    counts = verdict_counts(verifier)
    assert counts == {"correct": 6, "incorrect": 6, "inconclusive": 0}
    assert any(f"run {run.pk}" in text for text in messages_of(response))

    html = client.get(dashboard_url(project)).content.decode()
    row = html.split(f'id="job-run-{run.pk}"')[1].split("</tr>")[0]
    assert f'data-job-url="/api/grading/runs/{run.pk}/"' in html
    assert 'data-status="succeeded"' in row and ">Succeeded<" in row
    assert 'data-job-field="done">12<' in row and 'data-job-field="total">12<' in row
    assert f'data-job-count="correct">{counts["correct"]}<' in row
    assert f'data-job-count="incorrect">{counts["incorrect"]}<' in row
    assert 'data-job-count="inconclusive">0<' in row
    assert ">Cancel<" not in row and ">Resume<" not in row


def test_a_dataset_run_with_filters_covers_only_what_they_admit(client, researcher, django_capture_on_commit_callbacks):
    dataset = make_verifiable_dataset(questions=3, per_question=4)
    project = correctness_project(dataset)
    verifier = rule_verifier()
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("jobs-project-run-new", args=[project.pk]),
            {
                "run-verifier": verifier.pk,
                "run-scope": "dataset",
                "run-answer_types": ["A"],
                "run-models": ["model-0"],
                "run-chunk_size": 100,
            },
        )
    assert response.status_code == 302
    run = VerificationRun.objects.get()
    assert run.dataset == dataset and run.project is None
    assert run.answer_types == ["A"] and run.model_names == ["model-0"]
    assert run.status == "succeeded" and run.total == 4  # 2 A1 questions x 2 completions of model-0
    assert verdict_counts(verifier) == {"correct": 4, "incorrect": 0, "inconclusive": 0}
    html = client.get(dashboard_url(project)).content.decode()
    assert "whole dataset" in html and "model-0" in html


def test_invalid_run_requests_show_errors_and_start_nothing(client, researcher, make_user):
    dataset = make_verifiable_dataset()
    project = correctness_project(dataset)
    verifier = rule_verifier()
    client.force_login(researcher)
    url = reverse("jobs-project-run-new", args=[project.pk])
    response = client.post(url, {"run-scope": "project", "run-chunk_size": 0, "run-answer_types": ["Z9"]})
    assert response.status_code == 400
    html = response.content.decode()
    assert "This field is required." in html
    assert "Ensure this value is greater than or equal to 1." in html
    assert "Select a valid choice. Z9 is not one of the available choices." in html
    assert_csp_clean(html)
    response = client.post(
        url, {"run-verifier": verifier.pk, "run-scope": "project", "run-chunk_size": 10, "run-chunk_delay": 600}
    )
    assert response.status_code == 400 and "less than or equal to 60" in response.content.decode()
    assert not VerificationRun.objects.exists()

    # An answer-type project has no completions to verify: only the dataset scope is offered.
    answer_type_project = annotation_services.create_project(dataset=dataset, kind="answer_type", name="types")
    response = client.post(
        reverse("jobs-project-run-new", args=[answer_type_project.pk]),
        {"run-verifier": verifier.pk, "run-scope": "project", "run-chunk_size": 10},
    )
    assert response.status_code == 400
    assert "Select a valid choice. project is not one of the available choices." in response.content.decode()
    assert not VerificationRun.objects.exists()
    assert client.get(url).status_code == 200


def test_cancel_and_resume_buttons(client, researcher, django_capture_on_commit_callbacks):
    dataset = make_verifiable_dataset(questions=2, per_question=2)
    project = correctness_project(dataset)
    verifier = rule_verifier()
    run = runs.create_run(verifier=verifier, project=project, enqueue=False)
    client.force_login(researcher)
    html = client.get(dashboard_url(project)).content.decode()
    row = html.split(f'id="job-run-{run.pk}"')[1].split("</tr>")[0]
    assert 'data-status="queued"' in row and ">Cancel<" in row and ">Resume<" not in row

    back = dashboard_url(project) + "#verification-runs"
    response = client.post(reverse("jobs-run-cancel", args=[run.pk]), {"next": back})
    assert response.status_code == 302 and response.url == back
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert f"Run {run.pk} cancelled." in messages_of(response)

    response = client.post(reverse("jobs-run-cancel", args=[run.pk]), {"next": "https://elsewhere.example/"})
    assert response.url == back  # an outside address is never followed
    assert any("Cannot cancel: run" in text and "already ended (cancelled)" in text for text in messages_of(response))

    row = client.get(dashboard_url(project)).content.decode().split(f'id="job-run-{run.pk}"')[1].split("</tr>")[0]
    assert ">Resume<" in row and ">Cancel<" not in row
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("jobs-run-resume", args=[run.pk]), {"next": back})
    run.refresh_from_db()
    assert run.status == "succeeded" and run.attempt == 2 and run.done == run.total == 4
    assert f"Run {run.pk} resumed (attempt 2)." in messages_of(response)
    page = client.get(dashboard_url(project)).content.decode()
    assert 'data-job-count="correct">2<' in page

    # A run whose worker is alive cannot be resumed.
    VerificationRun.objects.filter(pk=run.pk).update(status="running", heartbeat_at=timezone.now(), finished_at=None)
    response = client.post(reverse("jobs-run-resume", args=[run.pk]), {"next": back})
    assert any("Cannot resume:" in text and "is running" in text for text in messages_of(response))
    run.refresh_from_db()
    assert run.status == "running" and run.attempt == 2
    # Cancelling a running run asks it to stop after its chunk.
    response = client.post(reverse("jobs-run-cancel", args=[run.pk]), {"next": back})
    run.refresh_from_db()
    assert run.cancel_requested and run.status == "running"
    assert any("will stop after the chunk" in text for text in messages_of(response))


# ---------------------------------------------------------------- exports


@pytest.fixture
def labelled_project(make_user):
    annotators = [make_user("annotator"), make_user("annotator")]
    dataset = make_verifiable_dataset(questions=3, per_question=2, name="Export set")
    project = correctness_project(dataset, annotators=annotators)
    label_everything(project, annotators)
    assert project.items.filter(state="resolved").count() == 6
    return project


def test_an_export_started_from_the_dashboard_produces_a_downloadable_bundle(
    client, researcher, labelled_project, django_capture_on_commit_callbacks
):
    project = labelled_project
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("jobs-project-export-new", args=[project.pk]),
            {
                "export-format": "verifybench",
                "export-file_types": ["jsonl", "csv"],
                "export-seed": 5,
                "export-option_per_type": 2,
                "export-option_models": 3,
            },
        )
    assert response.status_code == 302 and response.url == dashboard_url(project) + "#exports"
    job = ExportJob.objects.get()
    assert job.format == "verifybench" and job.file_types == ["jsonl", "csv"]
    assert job.options == {"seed": 5, "per_type": 2}  # the mu-MATH option is not one of verifybench's
    assert job.status == "succeeded", job.error
    counts = job.manifest["counts"]

    html = client.get(dashboard_url(project)).content.decode()
    row = html.split(f'id="job-export-{job.pk}"')[1].split("</tr>")[0]
    assert 'data-status="succeeded"' in row and ">Succeeded<" in row
    assert f'data-job-field="rows">{counts["rows"]}<' in row
    assert f"{counts['by_label']['correct']} correct, {counts['by_label']['incorrect']} incorrect" in row
    download_url = reverse("jobs-export-download", args=[job.pk])
    assert f'href="{download_url}"' in row
    for group, info in job.manifest["shortfalls"].items():
        assert f"{group}: {info['selected']} of {info['requested']} requested ({info['available']} available)" in row
    assert job.manifest["shortfalls"], "two A questions and one C question cannot fill K=2 of every type"

    response = client.get(download_url)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    bundle = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = bundle.namelist()
    assert "manifest.json" in names and any(name.endswith(".jsonl") for name in names)
    assert json.loads(bundle.read("manifest.json"))["counts"] == counts


def test_invalid_export_requests_show_errors_and_start_nothing(client, researcher, labelled_project):
    project = labelled_project
    client.force_login(researcher)
    url = reverse("jobs-project-export-new", args=[project.pk])
    response = client.post(url, {"export-format": "no-such-format", "export-seed": "x", "export-option_per_type": 0})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Select a valid choice. no-such-format is not one of the available choices." in html
    assert "Enter a whole number." in html
    assert "Ensure this value is greater than or equal to 1." in html
    assert html.count("This field is required.") == 1  # file types
    assert_csp_clean(html)
    assert not ExportJob.objects.exists()
    assert client.get(url).status_code == 200

    proof_like = annotation_services.create_project(dataset=project.dataset, kind="answer_type", name="types")
    page = client.get(reverse("jobs-project-export-new", args=[proof_like.pk])).content.decode()
    assert "No export format reads answer type projects." in page
    response = client.post(
        reverse("jobs-project-export-new", args=[proof_like.pk]),
        {"export-format": "verifybench", "export-file_types": ["jsonl"], "export-seed": 0},
    )
    assert response.status_code == 400 and not ExportJob.objects.exists()


def test_export_cancel_and_download_refusals(client, researcher, labelled_project):
    project = labelled_project
    job = export_services.create_export(project=project, format="verifybench-hard", enqueue=False)
    client.force_login(researcher)
    response = client.get(reverse("jobs-export-download", args=[job.pk]))
    assert response.status_code == 302 and response.url == dashboard_url(project) + "#exports"
    assert f"Export {job.pk} cannot be downloaded: it is queued; download it once it has succeeded." in messages_of(
        response
    )
    row = client.get(dashboard_url(project)).content.decode().split(f'id="job-export-{job.pk}"')[1].split("</tr>")[0]
    assert ">Cancel<" in row and ">Download<" not in row

    response = client.post(reverse("jobs-export-cancel", args=[job.pk]))
    job.refresh_from_db()
    assert job.status == "cancelled" and f"Export {job.pk} cancelled." in messages_of(response)
    response = client.post(reverse("jobs-export-cancel", args=[job.pk]))
    assert any("Cannot cancel: export" in text and "already ended" in text for text in messages_of(response))
    response = client.get(reverse("jobs-export-download", args=[job.pk]))
    assert f"Export {job.pk} cannot be downloaded: it cancelled without a bundle." in messages_of(response)


# ---------------------------------------------------------------- the dataset page: runs and selections


def test_dataset_runs_start_from_the_dataset_page(client, researcher, django_capture_on_commit_callbacks):
    dataset = make_verifiable_dataset(questions=2, per_question=2)
    verifier = rule_verifier()
    client.force_login(researcher)
    page = client.get(reverse("jobs-dataset", args=[dataset.pk])).content.decode()
    assert 'name="run-scope" value="dataset"' in page and 'value="project"' not in page
    assert_csp_clean(page)

    response = client.post(reverse("jobs-dataset-run-new", args=[dataset.pk]), {"run-scope": "dataset"})
    assert response.status_code == 400 and "This field is required." in response.content.decode()
    assert not VerificationRun.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("jobs-dataset-run-new", args=[dataset.pk]),
            {
                "run-verifier": verifier.pk,
                "run-scope": "dataset",
                "run-chunk_size": 1,
                "run-domains": ["math_reasoning"],
            },
        )
    assert response.status_code == 302 and response.url.startswith(reverse("jobs-dataset", args=[dataset.pk]))
    run = VerificationRun.objects.get()
    assert run.status == "succeeded" and run.done == 4 and run.domains == ["math_reasoning"]
    page = client.get(reverse("jobs-dataset", args=[dataset.pk])).content.decode()
    assert f'id="job-run-{run.pk}"' in page and 'data-job-count="correct">2<' in page


def test_verifybench_selection_makes_a_project_and_shows_its_report(client, researcher):
    dataset = make_verifiable_dataset(questions=3, per_question=6)
    verifier = rule_verifier()
    run = runs.create_run(verifier=verifier, dataset=dataset, enqueue=False)
    runs.execute_run(run.pk)
    # One question loses its wrong completions' verdicts: it can only offer the correct side.
    short_question = dataset.questions.order_by("pk").first()
    Verdict.objects.filter(completion__question=short_question, status="incorrect").delete()
    client.force_login(researcher)
    response = client.post(
        reverse("jobs-dataset-select", args=[dataset.pk]),
        {
            "select-strategy": "verifybench",
            "select-verifiers": [verifier.pk],
            "select-per_side": 2,
            "select-target": 2000,
            "select-min_minority": 2,
            "select-seed": 11,
            "select-name": "Round one",
            "select-labels_per_item": 2,
        },
    )
    record = SelectionRecord.objects.get()
    assert response.status_code == 302 and response.url == reverse("jobs-selection", args=[record.pk])
    project = record.project
    assert project.name == "Round one" and project.kind == "correctness" and project.labels_per_item == 2
    assert record.picked == 10 == project.items.count()  # 2 + 2 for two questions, 2 + 0 for the short one
    assert record.seed == 11 and record.strategy == "verifybench"
    assert all(
        is_right(item.subject) == (Verdict.objects.get(completion=item.subject).status == "correct")
        for item in project.items.select_related("project")
    )

    page = client.get(response.url)
    assert page.status_code == 200
    html = page.content.decode()
    assert_csp_clean(html)
    assert 'data-testid="picked-count">10<' in html
    assert 'data-testid="questions-short">1<' in html
    assert (
        f'<tr data-question="{short_question.pk}"><td>{short_question.external_id}</td><td class="number">3</td>'
        f'<td class="number">0</td>\n        <td class="number">0</td><td class="number">2</td>' in html
    )
    assert f'href="{dashboard_url(project)}"' in html
    assert html.count('href="/completions/') == 10
    first_pick = record.report["picks"][0]
    first_completion = Completion.objects.select_related("question").get(pk=first_pick["completion_id"])
    assert f'">{first_completion.external_id}</a></td><td>{first_completion.question.external_id}</td>' in html
    assert "judged correct by rules; 2 of 3 such completion(s)" in html
    listing = client.get(reverse("jobs-dataset", args=[dataset.pk])).content.decode()
    assert reverse("jobs-selection", args=[record.pk]) in listing and "Round one" in listing


def test_verifybench_hard_selection_reports_strata_and_missing_votes(client, researcher):
    dataset = make_verifiable_dataset(questions=3, per_question=4)
    first, second = rule_verifier("rules"), rule_verifier("contrarian")
    runs.execute_run(runs.create_run(verifier=first, dataset=dataset, enqueue=False).pk)
    completions = list(dataset.questions.order_by("pk").first().completions.order_by("pk"))
    # The second verifier disagrees on the first question's completions and is silent on every other one.
    for completion in completions:
        flipped = "incorrect" if is_right(completion) else "correct"
        Verdict.objects.create(completion=completion, verifier=second, status=flipped)
    client.force_login(researcher)
    response = client.post(
        reverse("jobs-dataset-select", args=[dataset.pk]),
        {
            "select-strategy": "verifybench-hard",
            "select-verifiers": [first.pk, second.pk],
            "select-per_side": 2,
            "select-target": 3,
            "select-min_minority": 1,
            "select-seed": 4,
            "select-labels_per_item": 2,
            "select-answer_types": ["A1"],
        },
    )
    record = SelectionRecord.objects.get()
    assert response.status_code == 302
    assert record.picked == 3 and record.report["contested"] == 4 and record.report["missing_votes"] == 4
    html = client.get(response.url).content.decode()
    assert 'data-testid="contested-count">4<' in html and 'data-testid="missing-votes">4<' in html
    assert 'data-testid="strata-table"' in html
    assert "<td>math_reasoning</td><td>math_reasoning/MATH</td><td>A1</td>" in html
    assert '<td class="number">4</td><td class="number">3</td>' in html
    assert "1 correct / 1 incorrect" in html
    assert "answer types: A1" in html
    assert "verifiers split 1 correct vs 1 incorrect" in html


def test_invalid_selections_show_errors_and_create_nothing(client, researcher):
    dataset = make_verifiable_dataset(questions=2, per_question=2)
    first, second = rule_verifier("rules"), rule_verifier("other")
    client.force_login(researcher)
    url = reverse("jobs-dataset-select", args=[dataset.pk])
    base = {"select-per_side": 2, "select-target": 10, "select-min_minority": 1, "select-labels_per_item": 2}
    response = client.post(url, {**base, "select-strategy": "verifybench", "select-verifiers": [first.pk, second.pk]})
    assert response.status_code == 400
    assert "The VerifyBench recipe uses exactly one verifier; choose one." in response.content.decode()
    response = client.post(url, {**base, "select-strategy": "verifybench-hard", "select-verifiers": [first.pk]})
    assert "The VerifyBench-Hard recipe needs at least two verifiers to vote." in response.content.decode()
    response = client.post(
        url,
        {
            **base,
            "select-strategy": "verifybench-hard",
            "select-min_minority": 2,
            "select-verifiers": [first.pk, second.pk],
        },
    )
    assert "With 2 verifiers the minority side has at most 1 votes." in response.content.decode()
    response = client.post(url, {**base, "select-strategy": "sideways", "select-per_side": 0})
    html = response.content.decode()
    assert "Select a valid choice. sideways is not one of the available choices." in html
    assert "Ensure this value is greater than or equal to 1." in html
    # Well-formed, but no verifier has judged anything: the refusal is shown and nothing is made.
    response = client.post(
        url, {**base, "select-strategy": "verifybench", "select-verifiers": [first.pk], "select-name": "Nothing"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'data-testid="form-errors"' in html and "picked no completion" in html
    assert 'value="Nothing"' in html
    assert_csp_clean(html)
    assert not SelectionRecord.objects.exists()
    assert not AnnotationProject.objects.filter(name="Nothing").exists()


def test_selection_report_pages_404_for_unknown_ids_and_non_researchers(client, researcher, annotator):
    client.force_login(researcher)
    assert client.get(reverse("jobs-selection", args=[999_999])).status_code == 404
    assert client.get(reverse("jobs-dataset", args=[999_999])).status_code == 404
    assert client.post(reverse("jobs-run-cancel", args=[999_999])).status_code == 404
    client.force_login(annotator)
    assert client.get(reverse("jobs-selection", args=[1])).status_code == 404


def test_proof_grading_projects_are_offered_the_proof_export_format(client, researcher):
    dataset = make_verifiable_dataset(questions=1, per_question=1)
    project = AnnotationProject.objects.create(name="Proofs", dataset=dataset, kind="proof_grade")
    rule_verifier()
    client.force_login(researcher)
    html = client.get(dashboard_url(project)).content.decode()
    export_form = html.split('data-testid="export-form"')[1].split("</form>")[0]
    assert '<option value="matharena-proofs"' in export_form
    assert '<option value="verifybench"' not in export_form and "export-option_per_type" not in export_form
    # verifiers judge completions: a proof-grading project (its dataset holds proofs) offers no verification run
    assert 'data-testid="run-form"' not in html
